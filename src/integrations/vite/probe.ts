/** Whether a Marginalia server answers at an address (the plugin's choice of port is project-server.ts). */
import { fetchHealth } from '../../http/health.js'

/** Whether a Marginalia server answers at `base` (its /health says so), within `timeoutMs`. */
export async function isMarginaliaAt(base: string, timeoutMs = 1_500): Promise<boolean> {
  return (await fetchHealth(base, timeoutMs)) !== null
}
