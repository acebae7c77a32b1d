/** Asking a running `marginalia serve` which store it serves (its /health): for the CLI (`mcp`, `doctor`) and the Vite plugin. */
import type { ClientRequest } from 'node:http'
import { storeId } from './store-id.js'

export interface HealthInfo {
  version?: string
  /**
   * `location` is absent when the server names paths only to admins (sign-in on); `id` is its
   * fingerprint (storeId); `project` the name of the project it belongs to, when known.
   */
  store?: { location?: string; id: string; project?: string }
  agent?: { connected: boolean; sessions: number; watching: number; lastSeenAt?: string }
}

/** Whether the store /health names is the one at `location` (by its location, else by its id). */
export function servesStore(health: HealthInfo, location: string): boolean {
  if (!health.store) return true
  return health.store.location !== undefined ? health.store.location === location : health.store.id === storeId(location)
}

/**
 * GET `${base}/health` (an `http:` URL), or null when nothing (or not Marginalia) answers within
 * `timeoutMs`. node:http rather than fetch(), and only once asked: `marginalia mcp` asks at start-up, and
 * loading fetch's client costs several times what node:http does.
 */
export async function fetchHealth(base: string, timeoutMs = 1000): Promise<HealthInfo | null> {
  const { get } = await import('node:http')
  return new Promise((resolve) => {
    let request: ClientRequest | undefined
    const timer = setTimeout(() => done(null), timeoutMs)
    function done(health: HealthInfo | null): void {
      clearTimeout(timer)
      request?.destroy()
      resolve(health)
    }
    try {
      request = get(`${base}/health`, (res) => {
        if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) return done(null)
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('error', () => done(null))
        res.on('end', () => {
          try {
            const body = JSON.parse(text) as { name?: unknown } & HealthInfo
            done(body.name === 'marginalia' ? body : null)
          } catch {
            done(null)
          }
        })
      })
      request.on('error', () => done(null))
    } catch {
      done(null) // not an http: URL
    }
  })
}
