/**
 * The extension's settings, as a person or an organisation sets them. Kept in `chrome.storage.sync`
 * under three documented keys — `server` (the Marginalia server's URL), `sites` (the origins
 * where the overlay runs) and `maskInputs` (typed values in the steps to reproduce: true masks
 * them everywhere, false keeps them, unset masks them except on local dev origins) — and read from `chrome.storage.managed` too (an organisation's policy,
 * described by managed_schema.json): a managed `server` wins, managed `sites` are always on.
 * The person's session lives in `chrome.storage.local` under `session`, for the server it was
 * given by.
 */

export const DEFAULT_SERVER = 'http://127.0.0.1:4848'

export interface Settings {
  server: string
  sites: string[]
  /** Typed values in the steps to reproduce: masked (true), kept (false), by origin (undefined). */
  maskInputs?: boolean
  /** What the organisation set (the options page shows those as fixed). */
  managed: { server: boolean; sites: string[]; maskInputs?: boolean }
}

export interface StoredSession {
  token: string
  name: string
  id: string
  expiresAt: string
  /** The server that gave it; a session never goes to another. */
  server: string
}

/** An http(s) origin (`https://staging.example.com`), or undefined when `input` is not one. */
export function siteOrigin(input: string): string | undefined {
  try {
    const url = new URL(input.trim())
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return url.origin
  } catch {
    return undefined
  }
}

/** A server's base URL without a trailing slash (`http://127.0.0.1:4848`), or undefined. */
export function serverUrl(input: string): string | undefined {
  try {
    const url = new URL(input.trim())
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    if (url.search || url.hash || url.username || url.password) return undefined
    return (url.origin + url.pathname).replace(/\/+$/, '')
  } catch {
    return undefined
  }
}

/**
 * The match pattern of one origin's pages. Firefox's patterns take no port, so there the pattern
 * covers every port of the host and the relay checks the exact origin.
 */
export function matchPattern(origin: string, portless = false): string {
  const url = new URL(origin)
  return `${url.protocol}//${portless ? url.hostname : url.host}/*`
}

function origins(value: unknown): string[] {
  if (!Array.isArray(value)) return []
  const out = new Set<string>()
  for (const v of value) {
    const o = typeof v === 'string' ? siteOrigin(v) : undefined
    if (o) out.add(o)
  }
  return [...out]
}

async function managedValues(): Promise<Record<string, unknown>> {
  try {
    return await chrome.storage.managed.get(null)
  } catch {
    return {} // no policy (or a browser without managed storage)
  }
}

export async function readSettings(): Promise<Settings> {
  const [mine, managed] = await Promise.all([chrome.storage.sync.get(['server', 'sites', 'maskInputs']), managedValues()])
  const managedServer = typeof managed.server === 'string' ? serverUrl(managed.server) : undefined
  const managedSites = origins(managed.sites)
  const server = managedServer ?? (typeof mine.server === 'string' ? serverUrl(mine.server) : undefined) ?? DEFAULT_SERVER
  const managedMask = typeof managed.maskInputs === 'boolean' ? managed.maskInputs : undefined
  const maskInputs = managedMask ?? (typeof mine.maskInputs === 'boolean' ? mine.maskInputs : undefined)
  return {
    server,
    sites: [...new Set([...managedSites, ...origins(mine.sites)])],
    ...(maskInputs === undefined ? {} : { maskInputs }),
    managed: { server: managedServer !== undefined, sites: managedSites, ...(managedMask === undefined ? {} : { maskInputs: managedMask }) },
  }
}

export async function readSession(server: string): Promise<StoredSession | undefined> {
  const { session } = await chrome.storage.local.get('session')
  const s = session as StoredSession | undefined
  if (!s || typeof s.token !== 'string' || s.server !== server) return undefined
  if (Date.parse(s.expiresAt) <= Date.now()) return undefined
  return s
}
