/**
 * `marginalia/loader`: the source-marking transform as a plain webpack loader, for bundlers that
 * take loader rules but no plugins — Next.js with Turbopack (`turbopack.rules`; `marginalia/next`
 * adds it) — and for webpack set-ups that prefer a rule. Dev only unless `sourceLocations: 'ids'`.
 * With ids and `fragments` (a folder relative to the project), each module's id → file:line:column
 * map is written there as `<hash>.json`: loaders run in several processes, so `marginalia/next`
 * merges the fragments into marginalia-sources.json once the build has compiled.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { markModule, type MarkOptions } from './shared/source-marks.js'

interface LoaderContext {
  resourcePath: string
  resourceQuery?: string
  rootContext: string
  mode?: string
  getOptions?: () => MarkOptions & { production?: boolean; fragments?: string }
  async: () => (err: Error | null, code?: string, map?: unknown) => void
}

/** Write one module's ids beside the others (atomically: another process may be merging). */
function writeFragment(dir: string, file: string, ids: Record<string, string>): void {
  mkdirSync(dir, { recursive: true })
  const name = createHash('sha1').update(file).digest('hex').slice(0, 16)
  const tmp = path.join(dir, `.${name}.${process.pid}.tmp`)
  writeFileSync(tmp, JSON.stringify({ file, ids }))
  renameSync(tmp, path.join(dir, `${name}.json`))
}

export default function marginaliaLoader(this: LoaderContext, code: string, map?: unknown): void {
  const done = this.async()
  const options = this.getOptions?.() ?? {}
  if (this.mode === 'production' && !options.production && options.sourceLocations !== 'ids') return done(null, code, map)
  const { fragments, ...markOptions } = options
  markModule(code, this.resourcePath + (this.resourceQuery ?? ''), this.rootContext, markOptions).then(
    (out) => {
      if (out?.ids && fragments !== undefined) writeFragment(path.resolve(this.rootContext, fragments), path.relative(this.rootContext, this.resourcePath), out.ids)
      // The map names the module by its absolute path: a bundler resolves a relative `sources` entry
      // against the module's own folder (Turbopack would read app/shop/app/shop/page.tsx).
      if (out) done(null, out.code, { ...out.map, sources: [this.resourcePath] })
      else done(null, code, map)
    },
    (e: unknown) => done(e instanceof Error ? e : new Error(String(e))),
  )
}
