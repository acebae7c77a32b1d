/**
 * Safe by default, with no set-up for the overlay, which runs inside the person's dev app (e.g.
 * http://localhost:5173) and calls this server on another port, so its requests carry that
 * page's Origin:
 * - the Host header must name this machine (DNS-rebinding defence): loopback names and
 *   addresses (localhost, 127.x.x.x, [::1]) with any port, the bound host, and the machine's own addresses when bound to every interface;
 * - an Origin, when present, must be a loopback origin (any dev server), the server's own
 *   origin, or one given with --allow-origin (a website, or a browser extension named by its exact
 *   origin): a public website the person visits can never drive this server;
 * - binding beyond loopback needs a token, and then every API, SSE and MCP request must carry it.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import { HttpError } from './respond.js'

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])

/** `localhost`, any 127.x.x.x, `::1` (bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  const h = unbracket(host.toLowerCase())
  if (h === 'localhost' || h === '::1') return true
  return isIP(h) === 4 && h.startsWith('127.')
}

/** `0.0.0.0` or `::`: every interface. */
export function isWildcardHost(host: string): boolean {
  const h = unbracket(host)
  return h === '0.0.0.0' || h === '::'
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/** A host as it appears in a URL or a Host header: IPv6 literals in brackets, lower case. */
export function urlHost(host: string): string {
  const h = unbracket(host.toLowerCase())
  return isIP(h) === 6 ? `[${h}]` : h
}

export interface SecurityOptions {
  /** The host the server is bound to. */
  host: string
  /** The port it listens on (known once listening). */
  port: () => number
  token?: string | undefined
  /** Extra allowed origins (`--allow-origin`), e.g. `https://preview.example.com`. */
  allowOrigins?: readonly string[]
  /** Extra allowed Host names (`--allow-host`), e.g. a name that resolves to this machine. */
  allowHosts?: readonly string[]
  /** Also check X-Forwarded-Host (behind a proxy, with --trust-proxy). */
  trustProxy?: boolean
}

export interface Security {
  /** 403 unless the Host header names an allowed host. */
  checkHost(req: IncomingMessage): void
  /** The request's Origin when present and allowed; undefined when absent; 403 when foreign. */
  checkOrigin(req: IncomingMessage): string | undefined
  /** 401 unless the request carries the token (when one is configured). */
  checkToken(req: IncomingMessage): void
  /** Whether `secret` is the configured token (constant time; false when there is none). */
  isToken(secret: string): boolean
  readonly requiresToken: boolean
}

export function createSecurity(options: SecurityOptions): Security {
  const hosts = new Set<string>([...LOOPBACK_NAMES, urlHost(options.host)])
  if (isWildcardHost(options.host)) {
    // Bound to every interface: this machine's own names and addresses are legitimate Hosts.
    hosts.add(hostname().toLowerCase())
    for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) hosts.add(urlHost(info.address))
  }
  for (const h of options.allowHosts ?? []) hosts.add(urlHost(h))

  const origins = new Set<string>()
  for (const o of options.allowOrigins ?? []) origins.add(normalizeOrigin(o))

  const tokenDigest = options.token === undefined ? undefined : digest(options.token)

  return {
    requiresToken: tokenDigest !== undefined,

    checkHost(req) {
      // Node keeps the first of several Host headers; a proxy may route by another. Refuse the ambiguity.
      let hostHeaders = 0
      for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hostHeaders++
      if (hostHeaders > 1) throw new HttpError(400, 'INVALID_PARAMS', `The request has ${hostHeaders} Host headers; send exactly one.`)
      const forwarded = options.trustProxy ? req.headers['x-forwarded-host'] : undefined
      const header = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || req.headers.host
      const name = header === undefined ? undefined : hostOf(header)
      if (name === undefined || !(hosts.has(name) || isLoopbackHost(name))) {
        throw new HttpError(403, 'FORBIDDEN', `Host "${header ?? ''}" is not allowed: this server answers only to ${[...LOOPBACK_NAMES].join(', ')} and the host it is bound to (pass --allow-host to add one).`)
      }
    },

    checkOrigin(req) {
      const origin = req.headers.origin
      if (origin === undefined) return undefined
      let url: URL | undefined
      try {
        url = origin === 'null' ? undefined : new URL(origin)
      } catch {
        url = undefined
      }
      const allowed =
        // A browser extension (its service worker carries the overlay's requests): only one named exactly.
        (EXTENSION_ORIGIN.test(origin) && origins.has(origin)) ||
        (url !== undefined &&
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          (isLoopbackHost(url.hostname) || origins.has(url.origin) || (hosts.has(url.hostname) && Number(url.port || defaultPort(url)) === options.port())))
      if (!allowed) {
        throw new HttpError(403, 'FORBIDDEN', `Origin "${origin}" is not allowed: only loopback origins (http://localhost:*, http://127.x.x.x:*, http://[::1]:*), this server and --allow-origin entries may call it.`)
      }
      return origin
    },

    isToken(secret) {
      return tokenDigest !== undefined && timingSafeEqual(digest(secret), tokenDigest)
    },

    checkToken(req) {
      if (tokenDigest === undefined) return
      const header = req.headers.authorization ?? ''
      const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header)
      // Both sides are SHA-256 digests, so the comparison is constant-time and length-independent.
      if (!match || !timingSafeEqual(digest(match[1]!), tokenDigest)) {
        throw new HttpError(401, 'UNAUTHORIZED', match ? 'The bearer token is not valid.' : 'This server needs "Authorization: Bearer <token>".', undefined, {
          'WWW-Authenticate': 'Bearer realm="marginalia"',
        })
      }
    },
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

function defaultPort(url: URL): string {
  return url.protocol === 'https:' ? '443' : '80'
}

/** The host name of a Host header (`example:8080` → `example`, `[::1]:80` → `[::1]`), or undefined when malformed. */
function hostOf(header: string): string | undefined {
  const h = header.trim().toLowerCase()
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]\s/]+)(?::(\d{1,5}))?$/.exec(h)
  return m ? m[1] : undefined
}

/**
 * A browser extension's origin, exactly one: Chromium's `chrome-extension://<32 letters a-p>` (the
 * Marginalia extension's is fixed by its key) or Firefox's `moz-extension://<uuid>` (one per
 * profile). Never a pattern: a server trusts the extensions it names and no other.
 */
const EXTENSION_ORIGIN = /^(chrome-extension:\/\/[a-p]{32}|moz-extension:\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

export function normalizeOrigin(origin: string): string {
  const lower = origin.trim().toLowerCase().replace(/\/+$/, '')
  if (/^(chrome|moz)-extension:/.test(lower)) {
    if (!EXTENSION_ORIGIN.test(lower)) throw new Error(`--allow-origin "${origin}" is not an extension origin like chrome-extension://<32 letters a-p> or moz-extension://<uuid>`)
    return lower
  }
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    throw new Error(`--allow-origin "${origin}" is not an origin like https://example.com:8080`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--allow-origin "${origin}" must be an http or https origin, or a browser extension's origin`)
  return url.origin
}

const CORS_ALLOW_HEADERS = 'Content-Type, Authorization, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version'
const CORS_EXPOSE_HEADERS = 'Mcp-Session-Id, WWW-Authenticate'
const CORS_ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS'

/**
 * CORS response headers for an allowed origin (always `Vary: Origin`, so caches keep them apart).
 * `expose`: the headers a page's script may read beyond the simple ones (the MCP session id, an
 * authentication challenge) are named — on the MCP endpoint's answers and on errors, the only
 * answers that carry them; the overlay's every other request is spared the bytes.
 */
export function corsHeaders(origin: string | undefined, expose = true): Record<string, string> {
  if (origin === undefined) return { Vary: 'Origin' }
  if (!expose) return { Vary: 'Origin', 'Access-Control-Allow-Origin': origin }
  return { Vary: 'Origin', 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS }
}

export function preflightHeaders(origin: string | undefined): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': CORS_ALLOW_METHODS,
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
    'Access-Control-Max-Age': '600',
  }
}
