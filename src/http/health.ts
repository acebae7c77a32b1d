/** Asking a running `marginalia serve` which store it serves (its /health): for the CLI (`mcp`, `doctor`) and the Vite plugin. */

export interface HealthInfo {
  version?: string
  store?: { location: string; id: string }
  agent?: { connected: boolean; sessions: number; watching: number; lastSeenAt?: string }
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
