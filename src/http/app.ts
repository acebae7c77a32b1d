/**
 * startHttpServer(store, options): the REST API, the live event stream, the Streamable HTTP MCP
 * endpoint, sign-in and the overlay assets on one plain node:http server, safe by default.
 *
 * The parts: the options checked (options.ts), who calls (callers.ts), the route table
 * (routes.ts) and what every request passes before its route (pipeline.ts).
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Store } from '../store/store.js'
import { createToolRegistry } from '../tools/registry.js'
import { Callers } from './callers.js'
import type { App } from './context.js'
import { bindError, LISTEN_BACKLOG, onClientError } from './listen.js'
import type { McpEndpoint, McpEndpointOptions } from './mcp.js'
import { resolveOptions, type HttpServerOptions } from './options.js'
import { createPipeline } from './pipeline.js'
import { PresenceTracker, reportingCalls, type Presence } from './presence.js'
import { RateLimiter } from './rate-limit.js'
import { sendJson } from './respond.js'
import { createRouter } from './routes.js'
import { describePolicy } from './tool-policy.js'
import { createSecurity, isWildcardHost, urlHost } from './security.js'
import type { EventStream } from './sse.js'
import { Uploads } from './uploads.js'
import { waitTaskOf } from '../tools/define.js'
import { startWebhooks } from './webhook-service.js'
import { CaptureTokens } from './captures.js'

export { assertSafeBinding, type HttpServerOptions } from './options.js'
export { assertPortFree } from './listen.js'

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

export async function startHttpServer(store: Store, options: HttpServerOptions = {}): Promise<HttpServer> {
  const settings = resolveOptions(options)
  const { host, log } = settings
  let port = settings.port
  const baseUrl = (): string => `http://${isWildcardHost(host) ? '127.0.0.1' : urlHost(host)}:${port}`

  const security = createSecurity({ host, port: () => port, token: settings.token, allowOrigins: settings.allowOrigins, allowHosts: settings.allowHosts, trustProxy: settings.trustProxy })
  const callers = new Callers(store, security, { ...settings, clock: settings.teamClock })
  const presence = new PresenceTracker(options.clock, settings.presenceDir === undefined ? {} : { storeDir: settings.presenceDir })
  const tools = createToolRegistry(store, { ...options.tools, ...(options.sources ? { sources: options.sources } : {}), validateOutput: options.validateOutput ?? false })
  const registry = reportingCalls(tools, presence)
  const mcp = lazyMcp({
    store,
    registry,
    presence,
    maxBodyBytes: settings.maxBodyBytes,
    keepAliveMs: settings.keepAliveMs,
    idleTimeoutMs: settings.mcpIdleTimeoutMs,
    maxSessions: settings.maxMcpSessions,
    maxSessionsPerOwner: settings.maxMcpSessionsPerIdentity,
    waitOf: (name) => waitTaskOf(tools.tool(name)),
    extendServer: options.extendServer,
    told: options.told,
    log,
  })
  const streams = new Set<EventStream>()
  const uploads = new Uploads(store, options.uploads, log)
  const captures = new CaptureTokens(store)
  const app: App = {
    store,
    security,
    callers,
    // For the sign-in code exchange, per client address (guessing codes is pointless, but cheap to refuse).
    signIn: { appOrigins: new Set(settings.appOrigins), limiter: new RateLimiter(0.2, 10, () => settings.teamClock().getTime()), sessionTtlMs: settings.sessionTtlMs },
    presence,
    mcp,
    tools: { exposes: (name) => tools.has(name), describe: () => describePolicy(options.tools ?? {}) },
    streams,
    uploads,
    captures,
    maxBodyBytes: settings.maxBodyBytes,
    keepAliveMs: settings.keepAliveMs,
    maxBufferedBytes: settings.maxBufferedBytes,
    staticDir: settings.staticDir,
    ...(options.sources ? { sources: options.sources } : {}),
    ...(settings.storeInfo ? { storeInfo: settings.storeInfo } : {}),
    baseUrl,
    publicUrl: () => settings.publicUrl?.toString() ?? baseUrl(),
    log,
  }
  const handle = createPipeline(app, createRouter())

  const server: Server = createHttpServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // How often node looks for requests past those limits (its default is every 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(settings.headersTimeoutMs / 4))),
    },
    (req, res) => {
      handle(req, res).catch((e: unknown) => {
        log(`request failed: ${e instanceof Error ? e.message : String(e)}`)
        if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal server error.' } })
        else res.destroy()
      })
    },
  )
  server.on('clientError', onClientError)

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening)
      uploads.stop()
      captures.stop()
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
  uploads.start()
  const webhooks = await startWebhooks(store, options.webhooks, host, app.publicUrl, log)
  if (webhooks) app.webhooks = webhooks

  let closing: Promise<void> | undefined
  return {
    url: baseUrl(),
    mcpUrl: `${baseUrl()}/mcp`,
    port,
    host,
    stats: () => ({ eventStreams: streams.size, mcpSessions: mcp.sessionCount }),
    presence: () => presence.current(),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        for (const stream of [...streams]) stream.end()
        callers.stop()
        uploads.stop()
        captures.stop()
        await mcp.close()
        await webhooks?.close().catch((e: unknown) => log(`webhooks: could not close cleanly: ${e instanceof Error ? e.message : String(e)}`))
        presence.complete()
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

/**
 * The MCP endpoint, loaded and made with the first /mcp request: the MCP SDK is a third of the
 * server's code, and the overlay, the inbox and the REST API never need it (the server a dev
 * server starts beside it is up that much sooner). Closed before that, it is never loaded.
 */
function lazyMcp(options: McpEndpointOptions): Pick<McpEndpoint, 'handle' | 'close' | 'sessionCount'> {
  let endpoint: McpEndpoint | undefined
  let loading: Promise<McpEndpoint> | undefined
  let closing: Promise<void> | undefined
  const load = (): Promise<McpEndpoint> =>
    (loading ??= import('./mcp.js').then(({ McpEndpoint }) => {
      endpoint = new McpEndpoint(options)
      // Closed while it loaded: it answers as a closing endpoint does.
      if (closing) void endpoint.close()
      return endpoint
    }))
  return {
    get sessionCount() {
      return endpoint?.sessionCount ?? 0
    },
    async handle(req, res, owner) {
      return (await load()).handle(req, res, owner)
    },
    close() {
      closing ??= (loading ?? Promise.resolve(undefined)).then(
        (e) => e?.close(),
        () => undefined, // it never loaded: nothing to close
      )
      return closing
    },
  }
}
