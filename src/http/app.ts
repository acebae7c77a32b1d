/**
 * startHttpServer(store, options): the REST API, the live event stream, the Streamable HTTP MCP
 * endpoint and the overlay assets on one plain node:http server, safe by default.
 *
 * Every request passes, in order: Host check (403), Origin check (403), CORS preflight, token
 * check (401; /health and static assets stay open), then its route.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import path from 'node:path'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Store } from '../store/store.js'
import { createToolRegistry, type RegistryOptions } from '../tools/registry.js'
import { VERSION } from '../version.js'
import { storeId } from './store-id.js'
import { DEFAULT_MAX_BODY_BYTES } from './body.js'
import { DEFAULT_MAX_MCP_SESSIONS, DEFAULT_MCP_IDLE_TIMEOUT_MS, McpEndpoint } from './mcp.js'
import { PresenceTracker, reportingCalls, type Presence } from './presence.js'
import { apiRoutes, type ApiContext } from './rest.js'
import { HttpError, sendError, sendJson, sendRpcError, toErrorResponse } from './respond.js'
import { corsHeaders, createSecurity, isLoopbackHost, isWildcardHost, normalizeOrigin, preflightHeaders, urlHost } from './security.js'
import { DEFAULT_SSE_KEEPALIVE_MS, DEFAULT_SSE_MAX_BUFFERED_BYTES, type EventStream } from './sse.js'
import { DEFAULT_STATIC_DIR, landingPage, serveStatic } from './static.js'
import { apiRoles, bearerOf, requireRole, Team, type Caller, type TeamOptions } from './team.js'
import { runAs } from '../store/actor.js'

export { DEFAULT_HOST, DEFAULT_PORT } from './defaults.js'
import { DEFAULT_HOST, DEFAULT_PORT } from './defaults.js'
// node's defaults are 60 s for the headers and 5 min for the whole request.
export { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './defaults.js'
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './defaults.js'
import { editorBase, registerSourceRoot, type SourceOptions } from '../plugin/resolve.js'
/**
 * Connections the kernel may hold before the server accepts them (node's default is 511; the
 * system caps it at net.core.somaxconn). A burst beyond it has SYNs dropped (retried a second
 * later) or, with SYN cookies, connections reset.
 */
const LISTEN_BACKLOG = 4_096

export interface HttpServerOptions {
  /** The app's source (issue 19): project root (editor links, get_annotation's snippet), a preview build's id manifest, the editor. */
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
  /** Tool registry options for the MCP endpoint: permission profile, allow/deny, plugins, byte budget. */
  tools?: Omit<RegistryOptions, 'validateOutput'>
  /** Called with each new MCP session's server before it connects (add resources, prompts …). */
  extendServer?: (server: McpServer) => void
  /** Where log lines go (default: stderr). */
  log?: (message: string) => void
  /** Where the store lives (a file path, a database location without secrets), reported by /health with its id. */
  storeLocation?: string
  /** The clock for presence timestamps. */
  clock?: () => Date
  /** The team inbox (issue 23): sign-in, roles, rate limits, proxy. Off until the store knows someone or requireSignIn. */
  team?: TeamOptions
}

export interface HttpServer {
  /** Base URL, e.g. `http://127.0.0.1:4848` (loopback when bound to every interface). */
  readonly url: string
  /** The MCP endpoint, `${url}/mcp`. */
  readonly mcpUrl: string
  readonly port: number
  readonly host: string
  /** Open event streams and MCP sessions. */
  stats(): { eventStreams: number; mcpSessions: number }
  presence(): Presence
  /** Stop listening; end event streams and MCP sessions; wait for connections to close. Does not close the store. */
  close(): Promise<void>
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

const SHORT_API_ROUTE = /^\/(?:events|questions|sessions\/[^/]+\/events)$/

/** The inbox's icon: a margin note (a page with a pin), as SVG. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="5" y="3" width="18" height="26" rx="2" fill="#fff" stroke="#334155" stroke-width="2"/><path d="M9 10h10M9 15h10M9 20h6" stroke="#94a3b8" stroke-width="2"/><circle cx="24" cy="22" r="6" fill="#e11d48"/><text x="24" y="25.5" font-family="sans-serif" font-size="9" font-weight="700" fill="#fff" text-anchor="middle">1</text></svg>'

export async function startHttpServer(store: Store, options: HttpServerOptions = {}): Promise<HttpServer> {
  const given = options.host ?? DEFAULT_HOST
  const host = given.startsWith('[') && given.endsWith(']') ? given.slice(1, -1) : given
  const token = options.token === '' ? undefined : options.token
  assertSafeBinding(host, token, options.team?.requireSignIn === true)
  if (options.sources?.root) registerSourceRoot(store, options.sources.root)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new Error('maxBodyBytes must be a positive whole number of bytes')
  const appOrigins = (options.allowOrigins ?? []).map(normalizeOrigin)
  const publicUrl = options.team?.publicUrl === undefined ? undefined : new URL(options.team.publicUrl)
  // The public origin is this server's own (behind a proxy its port is not the bound one).
  const allowOrigins = publicUrl ? [...appOrigins, publicUrl.origin] : appOrigins
  const maxMcpSessions = options.maxMcpSessions ?? DEFAULT_MAX_MCP_SESSIONS
  if (!Number.isInteger(maxMcpSessions) || maxMcpSessions <= 0) throw new Error('maxMcpSessions must be a positive whole number')
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headersTimeoutMs = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeoutMs)
  for (const [name, value] of [['requestTimeoutMs', requestTimeoutMs], ['headersTimeoutMs', headersTimeoutMs]] as const) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number of milliseconds`)
  }
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_SSE_KEEPALIVE_MS
  const staticDir = options.staticDir === undefined ? DEFAULT_STATIC_DIR : options.staticDir
  const log = options.log ?? ((message: string) => process.stderr.write(`marginalia: ${message}\n`))

  let port = options.port ?? DEFAULT_PORT
  const security = createSecurity({
    host,
    port: () => port,
    token,
    allowOrigins,
    allowHosts: [...(options.allowHosts ?? []), ...(publicUrl ? [publicUrl.hostname] : [])],
    trustProxy: options.team?.trustProxy === true,
  })
  const team = new Team(store, options.team ?? {}, new Set(appOrigins))
  // Presence files of stdio agents live beside a file store; a database store has no directory.
  const tracker = new PresenceTracker(options.clock, options.storeLocation === undefined || !path.isAbsolute(options.storeLocation) ? {} : { storeDir: path.dirname(options.storeLocation) })
  const storeInfo = options.storeLocation === undefined ? undefined : { location: options.storeLocation, id: storeId(options.storeLocation) }
  const registry = reportingCalls(createToolRegistry(store, { ...options.tools, validateOutput: options.validateOutput ?? false }), tracker)
  const mcp = new McpEndpoint({
    store,
    registry,
    presence: tracker,
    maxBodyBytes,
    keepAliveMs,
    idleTimeoutMs: options.mcpIdleTimeoutMs ?? DEFAULT_MCP_IDLE_TIMEOUT_MS,
    maxSessions: maxMcpSessions,
    extendServer: options.extendServer,
    log,
  })
  const streams = new Set<EventStream>()
  const api = apiRoutes({
    store,
    maxBodyBytes,
    keepAliveMs,
    maxBufferedBytes: options.sseMaxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES,
    presence$: tracker.presence$,
    streams,
    log,
    ...(options.sources ? { sources: options.sources } : {}),
  })

  const baseUrl = (): string => `http://${isWildcardHost(host) ? '127.0.0.1' : urlHost(host)}:${port}`

  /** Who calls: with the team on, a bearer secret (401 without); else the --token check, or nobody (local use, as before). */
  async function identify(req: IncomingMessage, seen?: { caughtUp: boolean }): Promise<Caller> {
    if (team.active || bearerOf(req) !== undefined) {
      // What other processes wrote counts from the next request: a revocation by `marginalia revoke`, a
      // sign-out or new person on another server sharing the store (read-after-write, as for reads).
      const catchingUp = store.catchUp()
      if (catchingUp) await catchingUp
      if (seen) seen.caughtUp = true
    }
    if (team.active) return team.identify(req, security.isToken)
    security.checkToken(req)
    return security.requiresToken ? { kind: 'operator' } : { kind: 'local' }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseTarget(req.url ?? '/')
    const pathname = url?.pathname ?? ''
    const isMcp = pathname === '/mcp'
    let cors: Record<string, string> = {}
    try {
      if (!url) throw new HttpError(400, 'INVALID_PARAMS', 'The request target is not a valid path.')
      security.checkHost(req)
      const origin = security.checkOrigin(req)
      cors = corsHeaders(origin)
      const method = req.method ?? 'GET'
      if (method === 'OPTIONS') {
        res.writeHead(204, preflightHeaders(origin))
        res.end()
        return
      }
      if (pathname === '/health') {
        if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /health (allowed: GET).`, undefined, { Allow: 'GET' })
        sendJson(res, 200, { status: 'ok', name: 'marginalia', version: VERSION, rev: store.rev, pending: store.countPending(), agent: tracker.current(), ...(team.active ? { signIn: true } : {}), ...(storeInfo ? { store: storeInfo } : {}), ...editorBase(options.sources) }, cors)
        return
      }
      if (pathname.startsWith('/auth/')) {
        // A sign-in link or a sign-out from another process counts at once (as in identify).
        const catchingUp = store.catchUp()
        if (catchingUp) await catchingUp
      }
      if (await team.handle(req, res, pathname, url, cors, security.isToken, maxBodyBytes)) return
      if (isMcp) {
        const caller = await identify(req)
        requireRole(caller, ['agent'], 'use the MCP tools')
        team.track(caller, res, () => res.destroy())
        for (const [k, v] of Object.entries(cors)) res.setHeader(k, v)
        await runAs(actorOf(caller), () => mcp.handle(req, res))
        return
      }
      // The short names (/events, /sessions/:id/events, /questions) are the same routes as under /api.
      const apiPath = SHORT_API_ROUTE.test(pathname) ? `/api${pathname}` : pathname
      if (apiPath === '/api' || apiPath.startsWith('/api/')) {
        // An attachment is named by its SHA-256 (a capability: only who saw the record knows it), so <img> can load it without a header.
        const capability = (method === 'GET' || method === 'HEAD') && /^\/api\/attachments\/[0-9a-f]{64}$/.test(apiPath)
        const seen = { caughtUp: false }
        const caller: Caller = capability ? { kind: 'local' } : await identify(req, seen)
        const need = apiRoles(method, apiPath)
        if (need) requireRole(caller, need.roles, need.what)
        if (await team.adminRoute(method, apiPath, req, res, cors, maxBodyBytes, publicUrl?.toString() ?? baseUrl())) return
        const route = api.match(method, apiPath)
        if (!route) throw new HttpError(404, 'NOT_FOUND', `No route ${method} ${pathname}. GET /api lists the routes.`)
        const ctx: ApiContext = { req, res, url, params: route.params, headers: cors, caller }
        const catchingUp = (method === 'GET' || method === 'HEAD') && !seen.caughtUp ? store.catchUp() : undefined // read-after-write across processes
        if (catchingUp) await catchingUp
        if (/\/events$/.test(apiPath)) team.track(caller, res, () => res.destroy())
        await runAs(actorOf(caller), () => route.handler(ctx))
        return
      }
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname} (allowed: GET).`, undefined, { Allow: 'GET' })
      if (staticDir !== null && (await serveStatic(staticDir, pathname, req, res, cors))) return
      if (pathname === '/favicon.ico' || pathname === '/favicon.svg') {
        res.writeHead(200, { 'Content-Type': 'image/svg+xml', 'Content-Length': String(Buffer.byteLength(FAVICON)), 'Cache-Control': 'max-age=86400', ...cors })
        res.end(req.method === 'HEAD' ? undefined : FAVICON)
        return
      }
      if (pathname === '/' || pathname === '/index.html') {
        const page = landingPage({ url: baseUrl(), mcpUrl: `${baseUrl()}/mcp`, requiresToken: security.requiresToken })
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(Buffer.byteLength(page)), 'Cache-Control': 'no-cache', ...cors })
        res.end(req.method === 'HEAD' ? undefined : page)
        return
      }
      throw new HttpError(404, 'NOT_FOUND', `Nothing at ${pathname}.`)
    } catch (e) {
      if (res.headersSent) {
        log(`error after the response started (${req.method} ${pathname}): ${e instanceof Error ? e.message : String(e)}`)
        res.destroy()
        return
      }
      if (isMcp) {
        const { status, headers, body } = toErrorResponse(e, log)
        sendRpcError(res, status, -32000, body.error.message, { ...cors, ...headers })
      } else {
        sendError(res, e, log, cors)
      }
    }
  }

  const server: Server = createHttpServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // How often node looks for requests past those limits (its default is every 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
    },
    (req, res) => {
      handle(req, res).catch((e: unknown) => {
        log(`request failed: ${e instanceof Error ? e.message : String(e)}`)
        if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal server error.' } })
        else res.destroy()
      })
    },
  )
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // What node answers without a listener: the status that says what was wrong (408 for a
    // request past the timeouts, 431 for headers over 16 KiB), but only on a connection that has
    // not written anything yet; on a kept-alive one the answer could land inside another
    // response, so that one is just closed.
    if (!socket.writable || socket.bytesWritten > 0) {
      socket.destroy()
      return
    }
    const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request'
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`)
  })

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening)
      reject(bindError(error, host, port))
    }
    const onListening = (): void => {
      server.off('error', onError)
      resolve()
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen({ port, host, backlog: LISTEN_BACKLOG })
  })
  port = (server.address() as AddressInfo).port

  let closing: Promise<void> | undefined
  return {
    url: baseUrl(),
    mcpUrl: `${baseUrl()}/mcp`,
    port,
    host,
    stats: () => ({ eventStreams: streams.size, mcpSessions: mcp.sessionCount }),
    presence: () => tracker.current(),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        for (const stream of [...streams]) stream.end()
        team.stop()
        await mcp.close()
        tracker.complete()
        server.closeIdleConnections()
        // Connections still busy (an answer being written) get a moment, then are cut.
        const force = setTimeout(() => server.closeAllConnections(), 2_000)
        force.unref()
        await closed
        clearTimeout(force)
      })()
      return closing
    },
  }
}

function actorOf(caller: Caller) {
  return caller.kind === 'identity' ? caller.principal.actor : undefined
}

/** Statuses for the parser and timeout errors node reports as `clientError` (as node's own defaults). */
const CLIENT_ERROR_STATUS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
}

/** The request target as a URL: origin-form (`/path?query`) or absolute-form; undefined when malformed. */
function parseTarget(target: string): URL | undefined {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target)
  } catch {
    return undefined
  }
}

function bindError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  return error.code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is already in use; choose another with --port`) : error
}

/**
 * Whether `host:port` can be bound right now, checked by binding it and letting go: `serve` asks
 * before it opens the store, so a second server that cannot get its port never touches the store
 * (no lock taken, no snapshot written on its way out). Port 0 always can.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return
  const probe = createNetServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (e: NodeJS.ErrnoException) => reject(bindError(e, host, port)))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()))
  })
}
