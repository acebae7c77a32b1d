/**
 * Which port a dev server of this project finds its Marginalia server on, or starts it on — the
 * Vite plugin's and `withMarginalia`'s one rule: a server that answers is used only when it serves
 * this project's store; another project's is never adopted. Without a port given, the project's
 * own port is tried first (recorded in `.marginalia/port`, else derived from the project's path),
 * then the next ones of the range, past other projects' servers and other programs; the port
 * settled on is recorded, so the project keeps it. Every process of one dev server (Next.js runs
 * several) walks the same ports in the same order and meets the same server: the first to listen
 * starts it, the others find it answering.
 */
import { createServer } from 'node:net'
import { fetchHealth, servesStore, type HealthInfo } from '../http/health.js'
import { candidatePorts, recordPort } from '../http/project-port.js'

export interface ProjectServerClaim {
  port: number
  /** A server of this project's store answers there already: use it. Else the port is free: start one. */
  reuse: boolean
  /** Ports passed over, and why (another project's server, another program), for the log. */
  passed: string[]
}

/** A server of another project answers on the port the person gave. */
class ForeignServerError extends Error {
  constructor(
    readonly port: number,
    readonly health: HealthInfo,
  ) {
    super(`port ${port} is taken by the Marginalia server of ${describeServer(health)}: it is not this project's, so its annotations would land in that project's inbox. Stop it, or give this project another port.`)
    this.name = 'ForeignServerError'
  }
}

/** "project \"shop\" (/home/me/shop/.marginalia/store.json)", as much as /health says. */
export function describeServer(health: HealthInfo): string {
  const store = health.store
  const name = store?.project !== undefined ? `project "${store.project}"` : 'another project'
  return store?.location !== undefined ? `${name} (${store.location})` : store ? `${name} (store ${store.id})` : name
}

/** Whether nothing listens on `host`:`port` now. */
function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.unref()
    probe.once('error', () => resolve(false))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)))
  })
}

export interface ClaimOptions {
  root: string
  storeFile: string
  /** The address the server binds, and the one it is asked at. */
  host: string
  displayHost: string
  /** A port the person gave (option or MARGINALIA_PORT): only it is tried. */
  port?: number
}

/** The port to use (see the module comment); throws ForeignServerError when a given port is another project's. */
export async function claimProjectPort(options: ClaimOptions): Promise<ProjectServerClaim> {
  const ports = options.port !== undefined ? [options.port] : candidatePorts(options.root)
  const passed: string[] = []
  for (const port of ports) {
    const health = await fetchHealth(`http://${options.displayHost}:${port}`, 1_000)
    if (health) {
      if (servesStore(health, options.storeFile)) return { port, reuse: true, passed }
      if (options.port !== undefined) throw new ForeignServerError(port, health)
      passed.push(`${port}: ${describeServer(health)}`)
      continue
    }
    if (options.port !== undefined || (await portFree(options.host, port))) return { port, reuse: false, passed }
    passed.push(`${port}: another program`)
  }
  throw new Error(`no free port for this project's Marginalia server among ${ports.join(', ')} (${passed.join('; ')}): give one with the port option`)
}

/** Record the port a project's server settled on, when it was the project's choice (not a port given). */
export function keepPort(root: string, port: number, given: boolean): void {
  if (!given) recordPort(root, port)
}
