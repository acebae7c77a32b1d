/** The steps recorder's switches: on or off for an origin, typed values masked or kept. */

/** Loopback and `.localhost` hosts: where the app is being developed, typed values are kept unless `maskInputs` says otherwise. */
export function isLocalDevOrigin(url: string): boolean {
  try {
    const host = new URL(url).hostname
    return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]' || host === '0.0.0.0'
  } catch {
    return false
  }
}

/** Off for this origin with `localStorage['marginalia:steps'] = 'off'` (on by default). */
export function stepsEnabled(): boolean {
  try {
    return localStorage.getItem('marginalia:steps') !== 'off'
  } catch {
    return true
  }
}

/** `data-mask-inputs` on a script tag: `true`/`false` (also `on`/`off`), anything else undefined (by origin). */
export function maskInputsAttribute(raw: string | undefined | null): boolean | undefined {
  if (raw === undefined || raw === null) return undefined
  const v = raw.trim().toLowerCase()
  if (v === '' || v === 'true' || v === 'on' || v === '1') return true
  if (v === 'false' || v === 'off' || v === '0') return false
  return undefined
}
