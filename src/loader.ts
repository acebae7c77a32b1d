/**
 * `marginalia/loader`: the source-marking transform as a plain webpack loader, for bundlers that
 * take loader rules but no plugins — Next.js with Turbopack (`turbopack.rules`, see the README)
 * — and for webpack set-ups that prefer a rule. Dev only unless `sourceLocations: 'ids'`.
 */
import { markModule, type MarkOptions } from './plugin/marks.js'

interface LoaderContext {
  resourcePath: string
  resourceQuery?: string
  rootContext: string
  mode?: string
  getOptions?: () => MarkOptions & { production?: boolean }
  async: () => (err: Error | null, code?: string, map?: unknown) => void
}

export default function marginaliaLoader(this: LoaderContext, code: string, map?: unknown): void {
  const done = this.async()
  const options = this.getOptions?.() ?? {}
  if (this.mode === 'production' && !options.production && options.sourceLocations !== 'ids') return done(null, code, map)
  markModule(code, this.resourcePath + (this.resourceQuery ?? ''), this.rootContext, options).then(
    // The map names the module by its absolute path: a bundler resolves a relative `sources` entry
    // against the module's own folder (Turbopack would read app/shop/app/shop/page.tsx).
    (out) => (out ? done(null, out.code, { ...out.map, sources: [this.resourcePath] }) : done(null, code, map)),
    (e: unknown) => done(e instanceof Error ? e : new Error(String(e))),
  )
}
