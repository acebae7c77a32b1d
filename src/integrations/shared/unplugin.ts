/**
 * The marking transform on unplugin: one implementation for webpack, rspack and the
 * webpack-loader rules of Next.js (see `marginalia/webpack`). `marginalia/vite` runs the same
 * `markModule` in its own plugin (it also injects the overlay and may start the server).
 */
import path from 'node:path'
import { createUnplugin } from 'unplugin'
import { markModule, type MarkOptions } from './source-marks.js'
import { MANIFEST_FILE, writeManifest } from './manifest.js'

export interface MarginaliaSourcesOptions extends MarkOptions {
  /** The project root paths are relative to (default: the bundler's context, else the working directory). */
  root?: string
  /** Mark in production builds too (webpack's mode 'production'); default false: dev only, unless sourceLocations is 'ids'. */
  production?: boolean
  /** Where the 'ids' manifest is written (default `<root>/marginalia-sources.json`, beside the build, not inside it). */
  manifest?: string
}

export const marginaliaSources = createUnplugin((options: MarginaliaSourcesOptions | undefined) => {
  const opts = options ?? {}
  let root = opts.root ?? process.cwd()
  let enabled = opts.sourceLocations !== false
  const ids = new Map<string, string>()
  return {
    name: 'marginalia-sources',
    enforce: 'pre',
    webpack(compiler) {
      if (!opts.root) root = compiler.context
      if (compiler.options.mode === 'production' && !opts.production && opts.sourceLocations !== 'ids') enabled = false
    },
    rspack(compiler) {
      if (!opts.root) root = compiler.context
      if (compiler.options.mode === 'production' && !opts.production && opts.sourceLocations !== 'ids') enabled = false
    },
    transformInclude(id) {
      return enabled && !id.includes('node_modules')
    },
    async transform(code, id) {
      const out = await markModule(code, id, root, opts)
      if (!out) return undefined
      if (out.ids) for (const [k, v] of Object.entries(out.ids)) ids.set(k, v)
      return { code: out.code, map: out.map }
    },
    buildEnd() {
      if (enabled && opts.sourceLocations === 'ids') writeManifest(opts.manifest ?? path.join(root, MANIFEST_FILE), ids)
    },
  }
})
