/**
 * MCP over Streamable HTTP at /mcp, both protocol revisions on one endpoint:
 *
 * - 2026-07-28 (stateless): every request carries its revision in `_meta` and is answered by a
 *   fresh server instance from the SDK's createMcpHandler; no session, so any `serve` process on
 *   the same store answers any request (no sticky routing behind a load balancer). Resource
 *   changes reach `subscriptions/listen` streams from one store subscription per process (a
 *   shared store's changes include other processes' writes).
 * - 2025-11-25 and older (sessions): initialize opens a session with its own server instance on
 *   the SDK's WebStandardStreamableHTTPServerTransport, kept in this process; later requests carry
 *   its Mcp-Session-Id. Sessions end on DELETE, when the server closes, or after a long idle time.
 *
 * The body is read and bounded here (so the same size limit and JSON rules hold as for the REST
 * API) and handed to the SDK parsed; the SDK's web-standard Response is written back to Node's.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createMcpHandler, isInitializeRequest, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type AuthInfo, type McpHttpHandler, type McpServer } from '@modelcontextprotocol/server'
import type { Subscription } from 'rxjs'
import { createServer } from '../mcp/server.js'
import { TaskTable, type TaskTableOptions } from '../mcp/tasks.js'
import { urisChangedBy } from '../mcp/resources.js'
import type { Store } from '../store/store.js'
import type { ToldLedger } from '../store/told.js'
import type { ToolService } from '../tools/registry.js'
import { BoundedEventStore } from './event-store.js'
import { parseJson, readBody, requireJsonContentType } from './body.js'
import type { PresenceTracker } from './presence.js'
import { HttpError, sendRpcError } from './respond.js'

export interface McpEndpointOptions {
  store: Store
  registry: ToolService
  presence: PresenceTracker
  maxBodyBytes: number
  /** SSE keepalive on the MCP streams (ms). */
  keepAliveMs: number
  /** Close a session after this long with no request and no open stream (0 = never). */
  idleTimeoutMs: number
  /**
   * At most this many sessions. A new one first takes the place of the least recently active
   * session with no request or stream open (a client that went away without DELETE); when every
   * session is busy, initialize is refused with 503.
   */
  maxSessions: number
  /**
   * At most this many sessions per owner (a person or an agent, with sign-in on). A new one first
   * ends that owner's own least recently active idle session; another owner's are never ended
   * for it. When all of the owner's are busy, its initialize is refused with 503.
   */
  maxSessionsPerOwner: number
  /** The wait a tool is, as its definition declares it (it runs as a task for a client that asks for one). */
  waitOf?: TaskTableOptions['waitOf']
  /** What the waits hand to an agent, recorded for its hooks and monitor (a file store's ledger). */
  told?: ToldLedger | undefined
  /** Called with each server instance (a session's, or a stateless request's) before it connects. */
  extendServer?: (server: McpServer) => void
  log: (message: string) => void
}

interface McpSession {
  transport: WebStandardStreamableHTTPServerTransport
  /** Whose session it is (an identity's id); undefined without sign-in (every client is the same one). */
  owner: string | undefined
  /** The agent it counts for in presence: the owner, else the client's name from initialize. */
  agent: string
  /** Requests of this session still being answered (a GET stream stays open for long). */
  open: number
  lastActivity: number
}

/** How soon a client should reconnect a dropped stream (the SSE `retry` field). */
const STREAM_RETRY_MS = 1_000

const SESSION_NOT_FOUND = -32001
const BAD_REQUEST = -32000
const PARSE_ERROR = -32700

export class McpEndpoint {
  private readonly sessions = new Map<string, McpSession>()
  private readonly sweeper: ReturnType<typeof setInterval> | undefined
  private closing = false
  /** Initialize requests being answered (their session is not in the map yet), in all and per owner. */
  private opening = 0
  private readonly openingBy = new Map<string, number>()
  /** The stateless (2026-07-28) side: one server instance per request. */
  private readonly modern: McpHttpHandler
  /** Store changes → the stateless side's subscriptions/listen streams. */
  private readonly changes: Subscription | undefined
  /** The waits run as tasks by 2025 sessions of this process. */
  private readonly tasks: TaskTable | undefined

  constructor(private readonly options: McpEndpointOptions) {
    if (options.idleTimeoutMs > 0) {
      this.sweeper = setInterval(() => this.closeIdle(), Math.min(options.idleTimeoutMs, 60_000))
      this.sweeper.unref()
    }
    // A 2026-07-28 request's caller comes with it (authInfo, set below): its waits run as tasks of that owner.
    this.modern = createMcpHandler(({ era, authInfo }) => this.instance(era, false, era === 'modern' ? ownerOf(authInfo) : undefined), {
      // 2025 traffic is served below with sessions, never by the SDK's stateless fallback.
      legacy: 'reject',
      keepAliveMs: options.keepAliveMs,
      maxRequestBodySize: options.maxBodyBytes,
      onerror: (error) => options.log(`MCP: ${error.message}`),
    })
    this.tasks = options.waitOf ? new TaskTable({ waitOf: options.waitOf }) : undefined
    const notify = this.modern.notify
    this.changes = options.store.closed
      ? undefined
      : options.store.changes$.subscribe((event) => {
          for (const uri of urisChangedBy(event)) notify.resourceUpdated(uri)
          if (event.type === 'session.created') notify.resourcesChanged()
        })
  }

  get sessionCount(): number {
    return this.sessions.size
  }

  /**
   * Answer one request to /mcp for `owner` (an identity's id; undefined without sign-in). A
   * session answers only its owner. Errors are JSON-RPC shaped, as the SDK's own are.
   */
  async handle(req: IncomingMessage, res: ServerResponse, owner?: string): Promise<void> {
    const method = req.method ?? 'GET'
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      sendRpcError(res, 405, BAD_REQUEST, `Method ${method} not allowed on /mcp (use POST, GET or DELETE).`, { Allow: 'GET, POST, DELETE, OPTIONS' })
      return
    }
    if (this.closing) {
      sendRpcError(res, 503, BAD_REQUEST, 'The server is shutting down.')
      return
    }
    const header = req.headers['mcp-session-id']
    const sessionId = Array.isArray(header) ? header[0] : header

    let body: unknown
    if (method === 'POST') {
      try {
        requireJsonContentType(req)
        body = parseJson(await readBody(req, res, this.options.maxBodyBytes))
      } catch (e) {
        if (!(e instanceof HttpError)) throw e
        sendRpcError(res, e.status, e.status === 400 ? PARSE_ERROR : BAD_REQUEST, e.message)
        return
      }
    }

    const aborted = new AbortController()
    res.once('close', () => aborted.abort())
    const request = toWebRequest(req, method, aborted.signal)

    if (sessionId === undefined && method === 'POST' && !(await isLegacyRequest(request, body, { maxRequestBodySize: this.options.maxBodyBytes }))) {
      // A 2026-07-28 request: stateless, answered by whichever process gets it.
      const agent = owner ?? clientName(body) ?? ''
      this.options.presence.streamOpened(agent, true)
      res.once('close', () => this.options.presence.streamClosed(agent))
      await writeResponse(res, await this.modern.fetch(request, { parsedBody: body, authInfo: callerInfo(owner) }))
      return
    }

    let session: McpSession | undefined
    if (sessionId !== undefined) {
      session = this.sessions.get(sessionId)
      if (!session || session.owner !== owner) {
        sendRpcError(res, 404, SESSION_NOT_FOUND, 'Session not found: it ended or never existed. Initialize a new session.')
        return
      }
    } else if (method === 'POST' && isInitialization(body)) {
      const refused = this.makeRoom(owner)
      if (refused !== undefined) {
        sendRpcError(res, 503, BAD_REQUEST, refused, { 'Retry-After': '5' })
        return
      }
      // Counted from here until the transport puts the session in the map (or fails to).
      this.opening++
      if (owner !== undefined) this.openingBy.set(owner, (this.openingBy.get(owner) ?? 0) + 1)
      let counted = true
      const settled = (): void => {
        if (counted) {
          this.opening--
          if (owner !== undefined) {
            const left = (this.openingBy.get(owner) ?? 1) - 1
            if (left > 0) this.openingBy.set(owner, left)
            else this.openingBy.delete(owner)
          }
        }
        counted = false
      }
      try {
        session = await this.open(owner, owner ?? initializeClientName(body) ?? '', settled)
        await this.serve(session, request, res, body)
      } finally {
        settled()
      }
      return
    } else {
      sendRpcError(res, 400, BAD_REQUEST, 'Bad Request: an Mcp-Session-Id header is required (send an initialize request first to get one), or send 2026-07-28 requests with the revision in _meta.')
      return
    }

    await this.serve(session, request, res, body)
  }

  private async serve(session: McpSession, request: Request, res: ServerResponse, body: unknown): Promise<void> {
    session.open++
    session.lastActivity = Date.now()
    this.options.presence.streamOpened(session.agent)
    res.once('close', () => {
      session.open--
      session.lastActivity = Date.now()
      this.options.presence.streamClosed(session.agent)
    })
    await writeResponse(res, await session.transport.handleRequest(request, body === undefined ? {} : { parsedBody: body }))
  }

  /**
   * A server instance for `era`: the shared registry, then the embedder's hook. Tasks are their
   * owner's: the identity, else the 2025 session; a 2026-07-28 request without sign-in is ''.
   */
  private instance(era: 'legacy' | 'modern', resourceEvents: boolean, taskOwner?: string): McpServer {
    const tasks = taskOwner !== undefined ? { tasks: this.tasks, taskOwner } : {}
    const server = createServer(this.options.store, { registry: this.options.registry, era, resourceEvents, ...tasks, ...(this.options.told ? { told: this.options.told } : {}) })
    this.options.extendServer?.(server)
    return server
  }

  /**
   * Make room for a new session of `owner`: undefined when it fits (after ending the least
   * recently active idle session that may give way), else why not. An owner gives way only with
   * its own sessions; without sign-in (no owner) any idle session may.
   */
  private makeRoom(owner: string | undefined): string | undefined {
    const { maxSessions, maxSessionsPerOwner } = this.options
    if (owner !== undefined) {
      let mine = this.openingBy.get(owner) ?? 0
      for (const s of this.sessions.values()) if (s.owner === owner) mine++
      if (mine >= maxSessionsPerOwner && !this.endOldestIdle(owner, `its owner has ${maxSessionsPerOwner} sessions and asked for a new one`)) {
        return `Too many MCP sessions for this caller: all ${maxSessionsPerOwner} of yours are in use (each has a request or stream open). End one with DELETE /mcp, or try again later.`
      }
    }
    if (this.sessions.size + this.opening < maxSessions) return undefined
    if (this.endOldestIdle(owner, `${maxSessions} sessions are open and a new one was asked for`) && this.sessions.size + this.opening < maxSessions) return undefined
    return `Too many MCP sessions: all ${maxSessions} are in use${owner !== undefined ? ' and none of yours is idle' : ' (each has a request or stream open)'}. End one with DELETE /mcp, or try again later.`
  }

  /** End the least recently active session with nothing open, of `owner` when given; whether there was one. */
  private endOldestIdle(owner: string | undefined, why: string): boolean {
    let oldest: [string, McpSession] | undefined
    for (const entry of this.sessions) {
      const s = entry[1]
      if (owner !== undefined && s.owner !== owner) continue
      if (s.open === 0 && (!oldest || s.lastActivity < oldest[1].lastActivity)) oldest = entry
    }
    if (!oldest) return false
    this.end(oldest[0], oldest[1], why)
    return true
  }

  /** End a session: out of the map at once (so it no longer counts), then its transport closed. */
  private end(id: string, session: McpSession, why: string): void {
    if (this.sessions.get(id) !== session) return
    this.options.log(`closing MCP session ${id}: ${why}`)
    this.sessions.delete(id)
    this.options.presence.sessionClosed(session.agent)
    // The session is gone from the table already; a transport that fails to close has nothing left to tell.
    void session.transport.close().catch(() => {})
  }

  /** Close every session and every stateless exchange (server shutdown). */
  async close(): Promise<void> {
    this.closing = true
    if (this.sweeper) clearInterval(this.sweeper)
    this.changes?.unsubscribe()
    this.tasks?.close()
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => {})))
    await this.modern.close().catch(() => {})
    this.sessions.clear()
  }

  private async open(owner: string | undefined, agent: string, onInitialized: () => void): Promise<McpSession> {
    const { presence } = this.options
    const session: McpSession = {
      owner,
      agent,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          onInitialized()
          this.sessions.set(id, session)
          presence.sessionOpened(agent)
        },
        keepAliveMs: this.options.keepAliveMs,
        maxRequestBodySize: this.options.maxBodyBytes,
        // Resumable streams: a client that loses a stream mid-call reconnects and gets the rest.
        eventStore: new BoundedEventStore(),
        retryInterval: STREAM_RETRY_MS,
      }),
      open: 0,
      lastActivity: Date.now(),
    }
    const transport = session.transport
    transport.onclose = () => {
      const id = transport.sessionId
      if (id !== undefined && this.sessions.get(id) === session) {
        this.sessions.delete(id)
        presence.sessionClosed(agent)
      }
    }
    // One server per session (the SDK binds a server to one transport); the registry is shared.
    await this.instance('legacy', true, owner ?? `session:${randomUUID()}`).connect(transport)
    return session
  }

  private closeIdle(): void {
    const now = Date.now()
    for (const [id, s] of this.sessions) {
      if (s.open === 0 && now - s.lastActivity > this.options.idleTimeoutMs) this.end(id, s, `idle for ${Math.round((now - s.lastActivity) / 1000)} s`)
    }
  }
}

/** The caller of a 2026-07-28 request, handed to its server instance: the identity's id ('' without sign-in). */
function callerInfo(owner: string | undefined): AuthInfo {
  return { token: '', clientId: owner ?? '', scopes: [], extra: { marginaliaOwner: owner ?? '' } }
}

function ownerOf(authInfo: AuthInfo | undefined): string {
  const owner = authInfo?.extra?.marginaliaOwner
  return typeof owner === 'string' ? owner : ''
}

function isInitialization(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body)
}

/** The client's name from a 2025 initialize request (its presence key without sign-in). */
function initializeClientName(body: unknown): string | undefined {
  const init = (Array.isArray(body) ? body : [body]).find((m) => isInitializeRequest(m)) as { params?: { clientInfo?: { name?: unknown } } } | undefined
  const name = init?.params?.clientInfo?.name
  return typeof name === 'string' ? name.slice(0, 200) : undefined
}

/** The client's name from a 2026-07-28 request's `_meta` envelope. */
function clientName(body: unknown): string | undefined {
  const message = (Array.isArray(body) ? body[0] : body) as { params?: { _meta?: Record<string, { name?: unknown } | undefined> } } | undefined
  const name = message?.params?._meta?.['io.modelcontextprotocol/clientInfo']?.name
  return typeof name === 'string' ? name.slice(0, 200) : undefined
}

/**
 * The Node request as the SDK's web-standard entry points take it. The body is not copied: it
 * was read and parsed here, and goes to the SDK as `parsedBody`.
 */
function toWebRequest(req: IncomingMessage, method: string, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name.startsWith(':')) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  return new Request(new URL(req.url ?? '/mcp', 'http://127.0.0.1'), { method, headers, signal })
}

/** Write the SDK's Response (JSON, or an SSE stream chunk by chunk) to Node's response. */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  res.writeHead(response.status, headers)
  if (!response.body) {
    res.end()
    return
  }
  res.flushHeaders()
  const reader = response.body.getReader()
  // A client that hangs up cancels the stream: the SDK sees its reader gone.
  const cancel = (): void => void reader.cancel().catch(() => {})
  res.once('close', cancel)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      res.write(value)
    }
  } catch {
    // The stream failed or was cancelled: the client is gone or will reconnect.
  } finally {
    res.off('close', cancel)
    res.end()
  }
}
