/**
 * The Marginalia server of `next dev`, started by `withMarginalia` as the Vite plugin starts its
 * own: once per project, whatever the number of Next.js processes that load next.config (each
 * walks the project's ports in the same order — project-server.ts — so the first to listen starts
 * it and the others find it answering), in a worker thread of the process that started it, so it
 * stops with `next dev`. The config waits only for the choice of port (a few local probes), not
 * for the start: a page loaded before the server answers says so and loads the overlay once it
 * does.
 */
import path from 'node:path'
import { DEFAULT_HOST } from '../http/defaults.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { projectName } from '../http/project-port.js'
import { storeId } from '../http/store-id.js'
import { DEFAULT_STORE_FILE } from '../store/defaults.js'
import { claimProjectPort, describeServer, keepPort } from './project-server.js'
import { startServer } from './vite/servers.js'

export interface NextDevServer {
  url: string
  /** The store's id and the project's name, for the overlay's tag (it sends nothing to another project's server). */
  store: string
  project: string
}

export interface NextDevServerOptions {
  root: string
  /** A port the person gave (withMarginalia's `port`, MARGINALIA_PORT): only it is tried. */
  port?: number
  /** The store file, relative to the root (default `.marginalia/store.json`). */
  store?: string
  log?: (message: string) => void
}

const STARTED = Symbol.for('marginalia.next.servers')

/** This process's claim per store file: next.config is loaded more than once in a process. */
function claims(): Map<string, Promise<NextDevServer>> {
  const g = globalThis as { [STARTED]?: Map<string, Promise<NextDevServer>> }
  g[STARTED] ??= new Map()
  return g[STARTED]
}

/** The project's server for `next dev`: found, or started in the background (see the module comment). */
export function nextDevServer(options: NextDevServerOptions): Promise<NextDevServer> {
  const root = path.resolve(options.root)
  const file = path.resolve(root, options.store ?? DEFAULT_STORE_FILE)
  const known = claims().get(file)
  if (known) return known
  const claim = claim_(root, file, options)
  claims().set(file, claim)
  claim.catch(() => claims().delete(file))
  return claim
}

async function claim_(root: string, file: string, options: NextDevServerOptions): Promise<NextDevServer> {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`))
  const host = DEFAULT_HOST
  const claim = await claimProjectPort({ root, storeFile: file, host, displayHost: host, ...(options.port !== undefined ? { port: options.port } : {}) })
  keepPort(root, claim.port, options.port !== undefined)
  const url = `http://${host}:${claim.port}`
  const found: NextDevServer = { url, store: storeId(file), project: projectName(root) }
  if (claim.reuse) return found
  for (const p of claim.passed) log(` marginalia: passed over port ${p}`)
  startServer({ file, port: claim.port, host, root }, (m) => log(` marginalia: ${m}`), false).then(
    (running) => log(` marginalia: inbox ${running.url}/ · MCP ${running.mcpUrl} · store ${path.relative(root, file) || file}`),
    async (e: unknown) => {
      // Another process of this dev server started it between the probe and the start: it answers.
      const health = await fetchHealth(url)
      if (health && servesStore(health, file)) return
      claims().delete(file)
      log(` marginalia: could not start the server on ${url}: ${health ? `the Marginalia server of ${describeServer(health)} took the port` : e instanceof Error ? e.message : String(e)}. Give withMarginalia another port: withMarginalia(nextConfig, { port: ${claim.port + 1} }).`)
    },
  )
  return found
}
