/** How the Vite plugin looks at a server already answering on its port before it reuses it. */
import path from 'node:path'
import { fetchHealth } from '../../http/health.js'

/** Whether a Marginalia server answers at `base` (its /health says so), within `timeoutMs`. */
export async function isMarginaliaAt(base: string, timeoutMs = 1_500): Promise<boolean> {
  return (await fetchHealth(base, timeoutMs)) !== null
}

/**
 * The two-store trap, caught when the plugin reuses a running server: that server serves another
 * store than this project's, so the agent configured for this project (by `marginalia init`) would
 * never see what the browser sends.
 */
export async function warnIfOtherStore(base: string, storeFile: string, warn: (message: string) => void): Promise<void> {
  const health = await fetchHealth(base)
  const served = health?.store?.location
  if (served === undefined || path.resolve(served) === storeFile) return
  warn(
    `marginalia: the server at ${base}/ serves the store ${served}, not this project's ${storeFile}: annotations go there, and an agent configured for this project will not see them. Stop that server (or start it from this project), or point the plugin at it with marginalia({ store: ${JSON.stringify(served)} }).`,
  )
}
