/**
 * `marginalia/next`: Marginalia in a Next.js app, from next.config — `withMarginalia(nextConfig)`.
 *
 * In `next dev` (Turbopack, the default, or `--webpack`) it adds `marginalia/loader` for the app's
 * own JSX — Server and Client Components alike get `data-marginalia-source="file:line:column"` on
 * every host element —, starts the project's Marginalia server as the Vite plugin does (once,
 * whatever the number of Next.js processes; it stops with `next dev`: next-server.ts), and sets
 * `MARGINALIA_OVERLAY` (the overlay's URL), `MARGINALIA_STORE_ID` and `MARGINALIA_PROJECT` (the
 * project the page belongs to) for `instrumentation-client.ts`, which loads the overlay
 * (`marginalia init` writes that file).
 * `next build` is left as it is: no marks, no overlay. A preview build is asked for with
 * `MARGINALIA_SOURCES=ids next build` (or `sourceLocations: 'ids'`): short `data-mid` ids in the
 * markup, `marginalia-sources.json` (id → file:line:column) written in the project after
 * compilation, and the overlay loaded from `MARGINALIA_URL` (default the local server).
 * The existing config — an object or a function of the phase — is merged, never replaced: its
 * `turbopack.rules` (e.g. Tailwind's), `webpack` function, `env` and `compiler` hooks stay.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_PORT } from '../http/defaults.js'
import { MANIFEST_FILE, writeManifest } from './shared/manifest.js'
import { nextDevServer, type NextDevServer } from './next-server.js'

/** What `withMarginalia` reads and writes of a Next.js config (the rest passes through untouched). */
interface NextConfigLike {
  distDir?: string
  env?: Record<string, string | undefined>
  turbopack?: { rules?: Record<string, unknown>; [key: string]: unknown }
  webpack?: ((config: WebpackConfigLike, context: { dev: boolean; [key: string]: unknown }) => WebpackConfigLike) | null
  experimental?: object
  compiler?: { runAfterProductionCompile?: (metadata: { projectDir: string; distDir: string }) => Promise<void>; [key: string]: unknown }
  [key: string]: unknown
}

interface WebpackConfigLike {
  module?: { rules?: unknown[] }
  [key: string]: unknown
}

type ConfigInput<C> = C | ((phase: string, context: { defaultConfig: C }) => C | Promise<C>)

export interface MarginaliaNextOptions {
  /**
   * 'paths' (default in `next dev`): file:line:column on each element; 'ids': a preview build —
   * `data-mid` ids and marginalia-sources.json, overlay included (also `MARGINALIA_SOURCES=ids`);
   * false: no marks (the overlay still loads in dev).
   */
  sourceLocations?: 'paths' | 'ids' | false
  /**
   * The Marginalia server the page talks to, run by you (default `MARGINALIA_URL`). Without it,
   * `next dev` starts the project's own server (see `port`), once, and stops it with itself.
   */
  server?: string
  /**
   * The port of the server `next dev` starts (default `MARGINALIA_PORT`, else this project's own
   * port: recorded in `.marginalia/port`, else derived from the project's path). A server already
   * answering there is used only when it serves this project's store.
   */
  port?: number
  /** Start the server in `next dev` (default true); false: the page expects `marginalia serve` on `server` or the port. */
  start?: boolean
  /** Globs (relative to the project) of files to mark; default all app source. */
  include?: string[]
  /** Globs of files never marked (node_modules never is). */
  exclude?: string[]
}

const PHASE_DEV = 'phase-development-server'
const PHASE_BUILD = 'phase-production-build'
/** The app's own JSX/TSX (`.js` too: create-next-app --js writes JSX there); never node_modules. */
const RULE_GLOB = '*.{js,jsx,tsx}'
const FRAGMENTS = 'marginalia-sources'
const LOADER = fileURLToPath(new URL('./source-loader.cjs', import.meta.url))

/** The overlay's URL for a page of this app (`dev`: the server `next dev` started or found). */
function overlayUrl(options: MarginaliaNextOptions, dev: NextDevServer | undefined): string {
  const base = dev?.url ?? options.server ?? process.env.MARGINALIA_URL ?? `http://127.0.0.1:${options.port ?? process.env.MARGINALIA_PORT ?? DEFAULT_PORT}`
  return `${base.replace(/\/+$/, '')}/overlay.js`
}

/** The port the person gave withMarginalia (the option, else MARGINALIA_PORT); undefined: the project's own. */
function givenPort(options: MarginaliaNextOptions): number | undefined {
  const raw = options.port ?? (process.env.MARGINALIA_PORT?.trim() ? Number(process.env.MARGINALIA_PORT.trim()) : undefined)
  if (raw !== undefined && (!Number.isInteger(raw) || raw < 1 || raw > 65_535)) throw new Error(`withMarginalia(): port must be a whole number from 1 to 65535 (got ${String(options.port ?? process.env.MARGINALIA_PORT)})`)
  return raw
}

/** Merge the ids fragments the loader wrote (one per module) into `<projectDir>/marginalia-sources.json`. */
function mergeFragments(projectDir: string, distDir: string): void {
  const dir = path.resolve(projectDir, distDir, FRAGMENTS)
  const ids = new Map<string, string>()
  let files: string[] = []
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  } catch {
    files = []
  }
  for (const f of files) {
    const { ids: some } = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { ids: Record<string, string> }
    for (const [id, loc] of Object.entries(some)) ids.set(id, loc)
  }
  writeManifest(path.join(projectDir, MANIFEST_FILE), ids)
}

/** `config` with Marginalia set up for `phase` (see the module comment). */
function apply(config: NextConfigLike, phase: string, options: MarginaliaNextOptions, server?: NextDevServer): NextConfigLike {
  const ids = options.sourceLocations === 'ids' || (options.sourceLocations === undefined && process.env.MARGINALIA_SOURCES === 'ids')
  const dev = phase === PHASE_DEV
  const preview = phase === PHASE_BUILD && ids
  // `next start` and a plain `next build` get the config as it is, with the overlay's URL empty:
  // instrumentation-client.ts's block is then dead code and leaves the bundle.
  if (!dev && !preview) return { ...config, env: { ...config.env, MARGINALIA_OVERLAY: '' } }
  // The project the page belongs to, for the overlay's tag: it sends nothing to another project's server.
  const expected = server ? { MARGINALIA_STORE_ID: server.store, MARGINALIA_PROJECT: server.project } : {}
  const out: NextConfigLike = { ...config, env: { ...config.env, MARGINALIA_OVERLAY: overlayUrl(options, server), ...expected } }
  const marks = options.sourceLocations !== false
  if (!marks) return out
  const distDir = config.distDir ?? '.next'
  const loaderOptions = {
    sourceLocations: preview ? 'ids' : 'paths',
    ...(options.include ? { include: options.include } : {}),
    ...(options.exclude ? { exclude: options.exclude } : {}),
    ...(preview ? { fragments: path.join(distDir, FRAGMENTS) } : {}),
  }
  const ours = { loaders: [{ loader: LOADER, options: loaderOptions }], condition: { not: 'foreign' } }
  const rules = { ...config.turbopack?.rules }
  const theirs = rules[RULE_GLOB]
  rules[RULE_GLOB] = theirs === undefined ? ours : [...(Array.isArray(theirs) ? (theirs as unknown[]) : [theirs]), ours]
  out.turbopack = { ...config.turbopack, rules }
  const userWebpack = config.webpack
  out.webpack = (webpackConfig, context) => {
    const result = userWebpack ? userWebpack(webpackConfig, context) : webpackConfig
    result.module ??= {}
    result.module.rules ??= []
    result.module.rules.push({ test: /\.(?:js|jsx|tsx)$/, exclude: /[\\/]node_modules[\\/]/, enforce: 'pre', use: [{ loader: LOADER, options: loaderOptions }] })
    return result
  }
  if (preview) {
    // The loader writes each module's ids as it marks it: a module served from a build cache
    // (Turbopack's on disk, webpack's in .next/cache) would be missing from the manifest.
    out.experimental = { ...(config.experimental as Record<string, unknown> | undefined), turbopackFileSystemCacheForBuild: false }
    const marking = out.webpack
    out.webpack = (webpackConfig, context) => ({ ...marking(webpackConfig, context), cache: false })
    const after = config.compiler?.runAfterProductionCompile
    out.compiler = {
      ...config.compiler,
      runAfterProductionCompile: async (metadata) => {
        mergeFragments(metadata.projectDir, metadata.distDir)
        await after?.(metadata)
      },
    }
  }
  return out
}

/**
 * Wrap a Next.js config: `export default withMarginalia(nextConfig)`. Returns a function of the
 * phase, as Next.js accepts, so dev and preview builds get Marginalia and a plain build does not.
 */
export function withMarginalia<C extends object>(config: ConfigInput<C> = {} as C, options: MarginaliaNextOptions = {}): (phase: string, context: { defaultConfig: C }) => Promise<C> {
  return async (phase, context) => {
    const resolved = typeof config === 'function' ? await config(phase, context) : config
    // `next dev` starts the project's server, as the Vite plugin does (unless the person runs one).
    const starts = phase === PHASE_DEV && options.start !== false && options.server === undefined && !process.env.MARGINALIA_URL
    const port = givenPort(options)
    const server = starts ? await nextDevServer({ root: process.cwd(), ...(port !== undefined ? { port } : {}) }) : undefined
    return apply(resolved as NextConfigLike, phase, options, server) as C
  }
}
