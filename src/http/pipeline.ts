/**
 * What every request passes, in order: a valid target (400), the Host check (403), the Origin
 * check (403), the CORS preflight; then its route (routes.ts): other processes' writes first
 * for /auth/*, the caller (401; with a bearer secret or sign-in on, after catching up with other
 * processes), the role (403), the tool policy for agents (403; tool-policy.ts), the path's
 * parameters (400), read-after-write for a GET, stream tracking (revocation closes it), and the
 * handler, acting as the caller.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { runAs } from '../store/actor.js'
import type { Role } from '../store/model.js'
import type { Store } from '../store/store.js'
import { requireRole, type Caller } from './callers.js'
import type { App, Route } from './context.js'
import { HttpError, sendError, sendRpcError, toErrorResponse } from './respond.js'
import { decodeParams, isRead, type Match, type Router } from './router.js'
import { corsHeaders, preflightHeaders } from './security.js'
import { requireTool } from './tool-policy.js'

/** Other processes' writes, when there may be any: a promise then, else nothing to wait for. */
function catchUp(store: Store, when = true): Promise<void> | undefined {
  return when ? store.catchUp() : undefined
}

/** The roles a request needs: its route's; in an area, a write needs what the POST route at the path needs, else admin. */
function needs(route: Route, others: readonly Route[], method: string, path: string): { roles: readonly Role[]; what: string } | undefined {
  const access = route.access
  if (access.kind !== 'caller') return undefined
  if (access.roles) return { roles: access.roles, what: access.what ?? `${method} ${path}` }
  if (!route.path.endsWith('/*') || isRead(method)) return undefined
  const post = others.find((r) => r.method === 'POST')?.access
  if (post?.kind === 'caller' && post.roles) return { roles: post.roles, what: post.what ?? `${method} ${path}` }
  return { roles: ['admin'], what: `${method} ${path}` }
}

export function createPipeline(app: App, router: Router<Route>): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  /** Who calls, as the route's access asks (at once when no identity is asked). */
  function callerOf(route: Route, req: IncomingMessage, path: string, seen: { caughtUp: boolean }): Caller | Promise<Caller> {
    const access = route.access
    if (access.kind === 'public' || access.kind === 'bearer') return { kind: 'local' }
    if (access.kind === 'capability' && access.path.test(path)) return { kind: 'local' }
    return app.callers.identify(req, seen)
  }

  return async function handle(req, res) {
    const url = parseTarget(req.url ?? '/')
    const method = req.method ?? 'GET'
    const path = url ? router.unalias(url.pathname) : ''
    const found: Partial<Match<Route>> = url ? router.match(method, path) : {}
    let cors: Record<string, string> = {}
    try {
      if (!url) throw new HttpError(400, 'INVALID_PARAMS', 'The request target is not a valid path.')
      app.security.checkHost(req)
      const origin = app.security.checkOrigin(req)
      cors = corsHeaders(origin, found.route?.jsonRpcErrors === true)
      if (method === 'OPTIONS') {
        res.writeHead(204, preflightHeaders(origin))
        res.end()
        return
      }
      const { route, raw = {}, others = [] } = found
      if (!route) throw new HttpError(404, 'NOT_FOUND', `Nothing at ${url.pathname}.`)
      // Nothing is awaited that need not be: a route that asks nobody answers within this call, so
      // a pipelined request behind it that node cannot parse finds the answer written (listen.ts).
      const first = catchUp(app.store, route.catchUpFirst === true)
      if (first) await first
      const seen = { caughtUp: false }
      const identifying = callerOf(route, req, path, seen)
      const caller = identifying instanceof Promise ? await identifying : identifying
      const need = needs(route, others, method, path)
      if (need) requireRole(caller, need.roles, need.what)
      requireTool(app.tools, caller, route, method, path)
      const params = decodeParams(raw)
      const reading = catchUp(app.store, route.readAfterWrite === true && isRead(method) && !seen.caughtUp) // read-after-write across processes
      if (reading) await reading
      if (route.stream) app.callers.track(caller, res, () => res.destroy())
      const actor = caller.kind === 'identity' ? caller.principal.actor : undefined
      await runAs(actor, () => route.handler({ req, res, url, path, params, headers: cors, caller, app, others }))
    } catch (e) {
      if (res.headersSent) {
        app.log(`error after the response started (${method} ${url?.pathname ?? ''}): ${e instanceof Error ? e.message : String(e)}`)
        res.destroy()
        return
      }
      if (found.route?.jsonRpcErrors) {
        const { status, headers, body } = toErrorResponse(e, app.log)
        sendRpcError(res, status, -32000, body.error.message, { ...cors, ...headers })
      } else {
        sendError(res, e, app.log, cors['Access-Control-Allow-Origin'] === undefined ? cors : corsHeaders(cors['Access-Control-Allow-Origin']))
      }
    }
  }
}

/** The request target as a URL: origin-form (`/path?query`) or absolute-form; undefined when malformed. */
function parseTarget(target: string): URL | undefined {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target)
  } catch {
    return undefined
  }
}
