/**
 * The route table: every route the server answers, declared once as data (method, path, who may
 * call it, a one-line summary, its zod input) beside its handler. The router, the role checks,
 * `GET /api` and `describeRoutes()` (the reference's REST page) are derived from it.
 *
 * Areas (`/api/*`, `/auth/*`, `/*`) answer what no route of their own takes: under /api the
 * caller is identified first, then 404 or 405; elsewhere 405 for anything but GET, else a built
 * asset, else 404.
 */
import { z } from 'zod'
import type { Role } from '../store/model.js'
import { editorBase } from '../sources/editor.js'
import { VERSION } from '../version.js'
import { adminRoutes } from './admin.js'
import { attachmentRoutes } from './attachments.js'
import { captureRoutes } from './captures.js'
import { openPermissions, permissionRoutes } from './permissions.js'
import { bearerOf, seesPermissions, seesRoster, type Caller } from './callers.js'
import { defineRoute, reply, type Access, type RequestContext, type Route } from './context.js'
import { HttpError } from './respond.js'
import { restRoutes } from './rest.js'
import { allowedMethods, isRead, methodNotAllowed, Router, type Method } from './router.js'
import { signInRoutes } from './sign-in.js'
import { webhookRoutes } from './webhooks.js'
import { landingPage, serveStatic } from './static.js'

/** The inbox's icon: a margin note (a page with a pin), as SVG. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="5" y="3" width="18" height="26" rx="2" fill="#fff" stroke="#334155" stroke-width="2"/><path d="M9 10h10M9 15h10M9 20h6" stroke="#94a3b8" stroke-width="2"/><circle cx="24" cy="22" r="6" fill="#e11d48"/><text x="24" y="25.5" font-family="sans-serif" font-size="9" font-weight="700" fill="#fff" text-anchor="middle">1</text></svg>'

const PUBLIC = { kind: 'public' } as const

/** A built asset at this path, if there is one (the overlay, the inbox). */
async function builtAsset(ctx: RequestContext): Promise<boolean> {
  const dir = ctx.app.staticDir
  return dir !== null && (await serveStatic(dir, ctx.url.pathname, ctx.req, ctx.res, ctx.headers))
}

/** What a path outside /api answers when no route takes it: 405 but for GET, a built asset, or 404. */
async function otherwise(ctx: RequestContext): Promise<void> {
  const method = ctx.req.method ?? 'GET'
  if (ctx.others.length > 0) throw methodNotAllowed(method, ctx.url.pathname, allowedMethods(ctx.others))
  if (!isRead(method)) throw methodNotAllowed(method, ctx.url.pathname, ['GET'])
  if (await builtAsset(ctx)) return
  throw new HttpError(404, 'NOT_FOUND', `Nothing at ${ctx.url.pathname}.`)
}

function sendText(ctx: RequestContext, type: string, cache: string, text: string): void {
  ctx.res.writeHead(200, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': cache, ...ctx.headers })
  ctx.res.end(ctx.req.method === 'HEAD' ? undefined : text)
}

const favicon = (path: string): Route =>
  defineRoute({
    method: 'GET',
    path,
    access: PUBLIC,
    summary: "The inbox's icon (a built asset of that name wins)",
    handler: async (ctx) => {
      if (!(await builtAsset(ctx))) sendText(ctx, 'image/svg+xml', 'max-age=86400', FAVICON)
    },
  })

const landing = (path: string): Route =>
  defineRoute({
    method: 'GET',
    path,
    access: PUBLIC,
    summary: 'The inbox when it is built; else a page saying the server runs and how to connect an agent',
    handler: async (ctx) => {
      if (await builtAsset(ctx)) return
      const base = ctx.app.baseUrl()
      sendText(ctx, 'text/html; charset=utf-8', 'no-cache', landingPage({ url: base, mcpUrl: `${base}/mcp`, requiresToken: ctx.app.security.requiresToken }))
    },
  })

/**
 * Whether /health may name where the store and the source live: always without sign-in (local
 * use, the --token check), else only for an admin or the operator. A missing or failing bearer
 * secret only hides the paths (the route stays public).
 */
function mayKnowPaths(caller: Caller | undefined): boolean {
  return caller !== undefined && seesRoster(caller)
}

/**
 * Who asks /health, as far as what it says depends on it: anyone is local use while the team
 * inbox is off; with it on, the bearer's caller, or undefined (no secret, or one that is not valid).
 */
function healthCaller(ctx: RequestContext): Caller | undefined | Promise<Caller | undefined> {
  const { callers, security } = ctx.app
  if (!callers.active) return { kind: 'local' }
  if (bearerOf(ctx.req) === undefined) return undefined
  return callers.bearer(ctx.req, (secret) => security.isToken(secret)).then(
    (caller) => caller,
    (e: unknown) => {
      if (e instanceof HttpError && e.status === 401) return undefined
      throw e
    },
  )
}

/**
 * Where an agent reaches this server's MCP endpoint and what it must send: the URL people reach
 * the server at (its public URL when one is set) and the kind of bearer secret, never a secret.
 * The inbox builds its one-click install links from it.
 */
function mcpEndpoint(ctx: RequestContext): { url: string; auth: 'none' | 'server-token' | 'agent-token' } {
  const { callers, security } = ctx.app
  return {
    url: `${ctx.app.publicUrl().replace(/\/+$/, '')}/mcp`,
    auth: callers.active ? 'agent-token' : security.requiresToken ? 'server-token' : 'none',
  }
}

const ROUTES: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/health',
    access: PUBLIC,
    summary: "Status, version, store rev, pending count, agent presence; whether sign-in is on; the MCP endpoint (URL, which token it takes); the store location and source root (with sign-in on: to admins only); how many of the agents' permission requests wait for an answer (to those who may answer them)",
    handler: (ctx) => {
      const { store, callers, presence, storeInfo, sources } = ctx.app
      const answer = (caller: Caller | undefined): void => {
        const paths = mayKnowPaths(caller)
        reply(ctx, 200, {
          status: 'ok',
          name: 'marginalia',
          version: VERSION,
          rev: store.rev,
          pending: store.countPending(),
          agent: presence.current(),
          ...(callers.active ? { signIn: true } : {}),
          mcp: mcpEndpoint(ctx),
          ...(storeInfo ? { store: paths ? storeInfo : { id: storeInfo.id, ...(storeInfo.project !== undefined ? { project: storeInfo.project } : {}) } } : {}),
          ...(paths ? editorBase(sources) : {}),
          // A page that shows the agents' permission prompts fetches them only when some wait.
          ...(caller !== undefined && seesPermissions(caller) ? { permissions: { open: openPermissions(store) } } : {}),
        })
      }
      // Answered within this call when no bearer secret needs checking (see the pipeline on pipelined requests).
      const caller = healthCaller(ctx)
      if (caller instanceof Promise) return caller.then(answer)
      answer(caller)
    },
  }),
  ...signInRoutes,
  defineRoute({
    method: '*',
    path: '/mcp',
    access: { kind: 'caller', roles: ['agent'], what: 'use the MCP tools' },
    stream: true,
    jsonRpcErrors: true,
    summary: 'MCP over Streamable HTTP: POST a JSON-RPC message, GET the session stream, DELETE to end the session',
    handler: async (ctx) => {
      for (const [k, v] of Object.entries(ctx.headers)) ctx.res.setHeader(k, v)
      await ctx.app.mcp.handle(ctx.req, ctx.res, ctx.caller.kind === 'identity' ? ctx.caller.principal.identity.id : undefined)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api',
    access: { kind: 'caller' },
    readAfterWrite: true,
    summary: 'The routes of the REST API and their short aliases',
    handler: (ctx) => reply(ctx, 200, apiListing()),
  }),
  ...restRoutes,
  ...attachmentRoutes,
  ...captureRoutes,
  ...permissionRoutes,
  ...adminRoutes,
  ...webhookRoutes,
  favicon('/favicon.ico'),
  favicon('/favicon.svg'),
  landing('/'),
  landing('/index.html'),
  defineRoute({
    method: '*',
    path: '/api/*',
    access: { kind: 'caller' },
    summary: 'Anything else under /api: 404, or 405 with Allow (after the caller is identified)',
    handler: (ctx) => {
      const method = ctx.req.method ?? 'GET'
      if (ctx.others.length > 0) throw methodNotAllowed(method, ctx.path, allowedMethods(ctx.others))
      throw new HttpError(404, 'NOT_FOUND', `No route ${method} ${ctx.url.pathname}. GET /api lists the routes.`)
    },
  }),
  defineRoute({
    method: '*',
    path: '/auth/*',
    access: PUBLIC,
    catchUpFirst: true,
    summary: 'Anything else under /auth/: as any other path',
    handler: otherwise,
  }),
  defineRoute({ method: '*', path: '/*', access: PUBLIC, summary: 'The built overlay and inbox assets (GET); 405 for other methods, else 404', handler: otherwise }),
]

/** The router over the table. */
export function createRouter(): Router<Route> {
  return new Router(ROUTES)
}

/** A JSON Schema, as `z.toJSONSchema` writes it. */
type JsonSchema = Record<string, unknown>

/** One route as the reference describes it (no handler, no server). */
export interface RouteInfo {
  method: Method
  path: string
  aliases?: string[]
  /** `public`: no identity asked; `capability`: the URL is the secret; `bearer`: the route reads the bearer itself; `caller`: any identified caller, or `roles`. */
  access: Access['kind']
  /** The roles that may call it (admin always may); absent: every caller. */
  roles?: Role[]
  summary: string
  /** The tool whose power the route exercises: an agent whose tool policy does not expose it gets 403. */
  tool?: string
  input?: { query?: JsonSchema; body?: JsonSchema }
}

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
  return rest
}

/** Every route, in the order the router tries them, with its input as JSON Schema. Needs no server and no store. */
export function describeRoutes(): RouteInfo[] {
  return ROUTES.map((r) => ({
    method: r.method,
    path: r.path,
    ...(r.aliases ? { aliases: [...r.aliases] } : {}),
    access: r.access.kind,
    ...(r.access.kind === 'caller' && r.access.roles ? { roles: [...r.access.roles] } : {}),
    summary: r.summary,
    ...(r.tool ? { tool: r.tool } : {}),
    ...(r.input ? { input: { ...(r.input.query ? { query: jsonSchema(r.input.query) } : {}), ...(r.input.body ? { body: jsonSchema(r.input.body) } : {}) } } : {}),
  }))
}

const isApiRoute = (r: Route) => (r.path === '/api' || r.path.startsWith('/api/')) && !r.path.endsWith('/*')

/** What `GET /api` answers: each route under /api with its query parameters, and the short aliases. */
export function apiListing(): { routes: string[]; aliases: Record<string, string> } {
  const routes = ROUTES.filter((r) => isApiRoute(r) && r.path !== '/api').map((r) => {
    const query = r.input?.query
    const names = query instanceof z.ZodObject ? Object.keys(query.shape) : []
    return `${r.method} ${r.path}${names.length > 0 ? `?${names.map((n) => `${n}=`).join('&')}` : ''}`
  })
  const aliases: Record<string, string> = {}
  for (const r of ROUTES) for (const alias of r.aliases ?? []) aliases[alias] = r.path
  return { routes, aliases }
}
