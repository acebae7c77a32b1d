/** Asking a running `marginalia serve` which store it serves (its /health): for the CLI (`mcp`, `doctor`) and the Vite plugin. */
import { storeId } from './store-id.js'

export interface HealthInfo {
  version?: string
  /** `location` is absent when the server names paths only to admins (sign-in on); `id` is its fingerprint (storeId). */
  store?: { location?: string; id: string }
  agent?: { connected: boolean; sessions: number; watching: number; lastSeenAt?: string }
}

/** Whether the store /health names is the one at `location` (by its location, else by its id). */
export function servesStore(health: HealthInfo, location: string): boolean {
  if (!health.store) return true
  return health.store.location !== undefined ? health.store.location === location : health.store.id === storeId(location)
}

/** GET `${base}/health`, or null when nothing (or not Marginalia) answers within `timeoutMs`. */
export async function fetchHealth(base: string, timeoutMs = 1000): Promise<HealthInfo | null> {
  try {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(timeoutMs) })
    if (!res.ok) return null
    const body = (await res.json()) as { name?: unknown } & HealthInfo
    return body.name === 'marginalia' ? body : null
  } catch {
    return null
  }
}
