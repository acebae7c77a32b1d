/**
 * The options of `startHttpServer`, checked and with their defaults: everything the server needs
 * to know before it builds anything. A bad option throws here, before a port is bound.
 */
import path from 'node:path'
import type { McpServer } from '@modelcontextprotocol/server'
import { DEFAULT_SESSION_TTL_MS } from '../auth/identities.js'
import type { SourceOptions } from '../sources/index.js'
import type { RegistryOptions } from '../tools/registry.js'
import type { ToldLedger } from '../store/told.js'
import { DEFAULT_AUTH_FAILURE_BURST, DEFAULT_MCP_IDLE_TIMEOUT_MS, DEFAULT_AUTH_FAILURES_PER_SECOND, DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY, DEFAULT_MAX_STREAMS_PER_IDENTITY, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_MCP_SESSIONS, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SSE_MAX_BUFFERED_BYTES } from './defaults.js'
import { DEFAULT_RATE_BURST, DEFAULT_RATE_PER_SECOND } from './rate-limit.js'
import { isLoopbackHost, normalizeOrigin } from './security.js'
import { DEFAULT_SSE_KEEPALIVE_MS } from './sse.js'
import { DEFAULT_STATIC_DIR } from './static.js'
import { storeId } from './store-id.js'
import type { UploadOptions } from './uploads.js'
import type { CallersOptions } from './callers.js'

/** The team inbox: sign-in, roles, rate limits, proxy. Off until the store knows someone or requireSignIn. */
export interface TeamOptions {
  /** Ask for sign-in even while the store knows nobody. */
  requireSignIn?: boolean
  /** The server's address as people reach it (sign-in links; its host passes the Host check). */
  publicUrl?: string
  /** Trust X-Forwarded-For / X-Forwarded-Host / X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy?: boolean
  /** Requests per second per identity (sustained; 0 = no limit) and the burst on top. */
  ratePerSecond?: number
  rateBurst?: number
  /** Failed authentications per client address, per second sustained (default 1; 0 = no limit) and the burst (default 20). */
  authFailuresPerSecond?: number
  authFailureBurst?: number
  /** MCP sessions one identity keeps at once (default 16): a new one ends that identity's own oldest idle session. */
  maxMcpSessionsPerIdentity?: number
  /** Streams (event streams, MCP requests) one identity has open at once (default 32). */
  maxStreamsPerIdentity?: number
  /** How long a person's session token works (default 12 h). */
  sessionTtlMs?: number
  clock?: () => Date
}

export interface HttpServerOptions {
  /** The app's source: project root (editor links, get_annotation's snippet), a preview build's id manifest, the editor. */
  sources?: SourceOptions
  /** Port to listen on (default 4848; 0 = any free port). */
  port?: number
  /** Address to bind (default 127.0.0.1). Anything beyond loopback needs `token`. */
  host?: string
  /** Require `Authorization: Bearer <token>` on every API, SSE and MCP request. */
  token?: string
  /** Origins allowed besides loopback ones and the server's own (e.g. `https://preview.example.com`). */
  allowOrigins?: readonly string[]
  /** Host names allowed in the Host header besides loopback names and the bound host. */
  allowHosts?: readonly string[]
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number
  /** SSE keepalive comment interval in ms (default 15 000; 0 = none). */
  keepAliveMs?: number
  /** An event-stream client whose unsent backlog exceeds this many bytes is disconnected (default 1 MiB). */
  sseMaxBufferedBytes?: number
  /** Close an MCP session idle this long with no open stream (default 5 min; 0 = never). A client that comes back later starts a new session. */
  mcpIdleTimeoutMs?: number
  /**
   * At most this many MCP sessions (default 100). A new session replaces the least recently
   * active one that has nothing open; when all are busy, initialize gets 503.
   */
  maxMcpSessions?: number
  /**
   * Time a client has to send a request's headers (default 10 s) and the whole request, body
   * included (default 30 s); after that the connection gets 408 and is closed. Responses that
   * stream (events, MCP) are not limited by these.
   */
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  /** Where the built overlay/inbox assets are (default `dist/overlay` of this package); null = none. */
  staticDir?: string | null
  /** Check tool results against their output schemas (tests). */
  validateOutput?: boolean
  /**
   * Uploads nothing references yet: a quota per caller over a window (default 50 MiB per hour),
   * their removal after a grace period (default 10 min), a free-space floor under a file store's
   * attachments (default 64 MiB). See `UploadOptions`.
   */
  uploads?: UploadOptions
  /** Tool registry options for the MCP endpoint: permission profile, allow/deny, plugins, byte budget. */
  tools?: Omit<RegistryOptions, 'validateOutput'>
  /**
   * The told ledger beside a file store (`.marginalia/told.json`): what the MCP endpoint's waits hand
   * to an agent is recorded there, so that agent's hooks and plugin monitor do not tell it again.
   */
  told?: ToldLedger
  /** Called with each MCP server instance before it connects (a 2025 session's, or a 2026-07-28 request's): add resources, prompts … */
  extendServer?: (server: McpServer) => void
  /** Where log lines go (default: stderr). */
  log?: (message: string) => void
  /** Where the store lives (a file path, a database location without secrets), reported by /health with its id. */
  storeLocation?: string
  /**
   * Signed webhooks delivered by this server (on by default). `location`: the store as given
   * (a file path, or the `postgres://` URL with its password), where the endpoints are kept
   * (default: the store's own location, right for a file or memory store); `allowPrivate`:
   * deliver to private and loopback addresses (default: only when the server is loopback-bound);
   * `retryBaseMs`: the first retry's delay (default 5 000, doubling); `false`: no webhooks.
   */
  webhooks?: { location?: string; allowPrivate?: boolean; retryBaseMs?: number } | false
  /** The clock for presence timestamps. */
  clock?: () => Date
  /** The team inbox: sign-in, roles, rate limits, proxy. Off until the store knows someone or requireSignIn. */
  team?: TeamOptions
}

/** Refuses (throws) to bind beyond loopback without a token or required sign-in. */
export function assertSafeBinding(host: string, token: string | undefined, requireSignIn = false): void {
  if (!isLoopbackHost(host) && (token === undefined || token === '') && !requireSignIn) {
    throw new Error(
      `refusing to listen on ${host} without a token: anyone who can reach this machine could read and change annotations ` +
        'and drive the agent. Pass --require-sign-in (people and agents with their own tokens), or --token <secret> (or set MARGINALIA_TOKEN), or bind to 127.0.0.1.',
    )
  }
}

/** The options checked, with every default filled in (the team's: what the callers take). */
export interface ServerSettings extends Omit<CallersOptions, 'clock'> {
  host: string
  port: number
  token: string | undefined
  maxBodyBytes: number
  /** The --allow-origin origins: a person's token may be handed to exactly these. */
  appOrigins: string[]
  /** The app origins and the public URL's origin (this server's own behind a proxy). */
  allowOrigins: string[]
  allowHosts: string[]
  publicUrl: URL | undefined
  maxMcpSessions: number
  mcpIdleTimeoutMs: number
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveMs: number
  maxBufferedBytes: number
  staticDir: string | null
  log: (message: string) => void
  maxMcpSessionsPerIdentity: number
  sessionTtlMs: number
  teamClock: () => Date
  /** Where the store lives, its id and the project's name, for /health. */
  storeInfo: { location: string; id: string; project?: string } | undefined
  /** Where stdio agents' presence files are: beside a file store (a database store has no directory). */
  presenceDir: string | undefined
}

export function resolveOptions(options: HttpServerOptions): ServerSettings {
  const given = options.host ?? DEFAULT_HOST
  const host = given.startsWith('[') && given.endsWith(']') ? given.slice(1, -1) : given
  const token = options.token === '' ? undefined : options.token
  const team = options.team ?? {}
  assertSafeBinding(host, token, team.requireSignIn === true)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new Error('maxBodyBytes must be a positive whole number of bytes')
  const appOrigins = (options.allowOrigins ?? []).map(normalizeOrigin)
  const publicUrl = team.publicUrl === undefined ? undefined : new URL(team.publicUrl)
  const maxMcpSessions = options.maxMcpSessions ?? DEFAULT_MAX_MCP_SESSIONS
  if (!Number.isInteger(maxMcpSessions) || maxMcpSessions <= 0) throw new Error('maxMcpSessions must be a positive whole number')
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headersTimeoutMs = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeoutMs)
  for (const [name, value] of [['requestTimeoutMs', requestTimeoutMs], ['headersTimeoutMs', headersTimeoutMs]] as const) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number of milliseconds`)
  }
  const location = options.storeLocation
  return {
    host,
    port: options.port ?? DEFAULT_PORT,
    token,
    maxBodyBytes,
    appOrigins,
    allowOrigins: publicUrl ? [...appOrigins, publicUrl.origin] : appOrigins,
    allowHosts: [...(options.allowHosts ?? []), ...(publicUrl ? [publicUrl.hostname] : [])],
    publicUrl,
    maxMcpSessions,
    mcpIdleTimeoutMs: options.mcpIdleTimeoutMs ?? DEFAULT_MCP_IDLE_TIMEOUT_MS,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_SSE_KEEPALIVE_MS,
    maxBufferedBytes: options.sseMaxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES,
    staticDir: options.staticDir === undefined ? DEFAULT_STATIC_DIR : options.staticDir,
    log: options.log ?? ((message: string) => process.stderr.write(`marginalia: ${message}\n`)),
    requireSignIn: team.requireSignIn === true,
    trustProxy: team.trustProxy === true,
    ratePerSecond: team.ratePerSecond ?? DEFAULT_RATE_PER_SECOND,
    rateBurst: team.rateBurst ?? DEFAULT_RATE_BURST,
    authFailuresPerSecond: team.authFailuresPerSecond ?? DEFAULT_AUTH_FAILURES_PER_SECOND,
    authFailureBurst: team.authFailureBurst ?? DEFAULT_AUTH_FAILURE_BURST,
    maxMcpSessionsPerIdentity: team.maxMcpSessionsPerIdentity ?? DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY,
    maxStreamsPerIdentity: team.maxStreamsPerIdentity ?? DEFAULT_MAX_STREAMS_PER_IDENTITY,
    sessionTtlMs: team.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
    teamClock: team.clock ?? (() => new Date()),
    storeInfo: location === undefined ? undefined : { location, id: storeId(location), ...projectOf(location, options.sources?.root) },
    presenceDir: location === undefined || !path.isAbsolute(location) ? undefined : path.dirname(location),
  }
}

/**
 * The name of the project a store belongs to (its folder's name), for /health: the source root's,
 * else the folder holding a `.marginalia/` store. A page compares it with the project it expects.
 */
function projectOf(location: string, root: string | undefined): { project?: string } {
  if (root !== undefined) return { project: path.basename(path.resolve(root)) }
  if (!path.isAbsolute(location)) return {}
  const dir = path.dirname(location)
  return path.basename(dir) === '.marginalia' ? { project: path.basename(path.dirname(dir)) } : {}
}
