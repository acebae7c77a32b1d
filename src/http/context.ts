/**
 * What a route is and what its handler gets. A route is data (method, path, who may call it, a
 * one-line summary, its zod input) beside its handler; the handler reaches the server's parts
 * through `ctx.app`, so the table itself needs no server and no store (routes.ts describes it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import type { Role } from '../store/model.js'
import { ValidationError } from '../store/errors.js'
import type { SourceOptions } from '../sources/index.js'
import { readJson } from './body.js'
import { sendJson } from './respond.js'
import type { Caller, Callers } from './callers.js'
import type { McpEndpoint } from './mcp.js'
import type { PresenceTracker } from './presence.js'
import type { Method } from './router.js'
import type { Security } from './security.js'
import type { RateLimiter } from './rate-limit.js'
import type { EventStream } from './sse.js'
import type { WebhookService } from '../webhooks/index.js'
import type { Uploads } from './uploads.js'

/** The server's parts, as the handlers see them. */
/** What the HTTP server knows of the policy: which tools it exposes, and how it was set. */
export interface ToolGate {
  exposes(tool: string): boolean
  /** The policy as the operator set it, e.g. `--profile read-only --deny get_changes`. */
  describe(): string
}

export interface App {
  store: Store
  security: Security
  callers: Callers
  signIn: {
    /** The exact app origins a person's token may be handed to (--allow-origin). */
    appOrigins: ReadonlySet<string>
    /** For the sign-in code exchange, per client address. */
    limiter: RateLimiter
    /** How long a person's session token works. */
    sessionTtlMs: number
  }
  presence: PresenceTracker
  /** The MCP endpoint: loaded with the first /mcp request. */
  mcp: Pick<McpEndpoint, 'handle' | 'close' | 'sessionCount'>
  /** The tool policy, which binds agents on REST and the event streams as on /mcp. */
  tools: ToolGate
  /** Uploads nothing references yet: the per-caller quota, their removal, the free-space floor. */
  uploads: Uploads
  /** The one-time tokens of the open capture requests (an answer to an agent's capture needs its request's). */
  captures: { take(annotationId: string, requestId: string, token: string | undefined): void }
  /** The open event streams (so the server can end them on close). */
  streams: Set<EventStream>
  maxBodyBytes: number
  keepAliveMs: number
  maxBufferedBytes: number
  /** Where the built overlay/inbox assets are; null: none. */
  staticDir: string | null
  /** The app's source: project root, a preview build's id manifest, the editor. */
  sources?: SourceOptions
  /** The webhook deliverer and the endpoints' administration; undefined when webhooks are off. */
  webhooks?: WebhookService
  /** Where the store lives and its id, for /health. */
  storeInfo?: { location: string; id: string; project?: string }
  /** This server's URL as it is bound (loopback for every interface). */
  baseUrl(): string
  /** This server's URL as people reach it (sign-in links). */
  publicUrl(): string
  log: (message: string) => void
}

export interface RequestContext {
  req: IncomingMessage
  res: ServerResponse
  url: URL
  /** The path routed: the URL's, or what its alias stands for (`/events` → `/api/events`). */
  path: string
  /** The path's parameters, decoded. */
  params: Record<string, string>
  /** CORS headers for this request's origin. */
  headers: Record<string, string>
  /** Who calls; `local` on a public route. */
  caller: Caller
  app: App
  /** When the route is an area: the routes at this path that take other methods (405); empty: nothing here (404). */
  others: readonly Route[]
}

/**
 * Who may call a route:
 * - `public`: anyone who passed the Host and Origin checks (no identity is asked);
 * - `capability`: anyone with the URL when `path` matches it (a secret in the path), else as `caller`;
 * - `bearer`: the route reads the bearer secret itself (sign-in and sign-out);
 * - `caller`: an identified caller (401 without one when sign-in or a token is on) with one of
 *   `roles` when given (403 otherwise; admin, the operator and local use may do everything).
 *   An area's `caller` with no roles asks, for a write, what the POST route at the path asks.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'capability'; path: RegExp; what: string }
  | { kind: 'bearer' }
  | { kind: 'caller'; roles?: readonly Role[]; what?: string }

export interface RouteInput<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  /** The query parameters. */
  query?: Q
  /** The JSON body. */
  body?: B
}

export interface Route {
  method: Method
  /** `/api/sessions/:id`; `/api/*` is an area: the path and everything below it. */
  path: string
  /** Other paths that are this route (`/events` for `/api/events`). */
  aliases?: readonly string[]
  access: Access
  summary: string
  input?: RouteInput
  /** Other processes' writes count before this route runs, even before its caller is known. */
  catchUpFirst?: boolean
  /** A GET answers what other processes wrote too (read-after-write across processes). */
  readAfterWrite?: boolean
  /** An open stream: closed when its caller is revoked or signs out. */
  stream?: boolean
  /**
   * The tool whose power the route exercises (`reply` for posting a reply, `get_changes` for an
   * event stream): an agent whose tool policy does not expose it gets 403 (tool-policy.ts).
   */
  tool?: string
  /** Errors as JSON-RPC (the MCP endpoint). */
  jsonRpcErrors?: boolean
  handler(ctx: RequestContext): Promise<void> | void
}

/** The parsed input of a route, read when the handler asks for it (the body on first use). */
export interface InputOf<Q extends z.ZodType, B extends z.ZodType> {
  query(): z.output<Q>
  body(): Promise<z.output<B>>
}

/**
 * A route whose handler gets its declared input parsed: `input.query()` from the query string,
 * `await input.body()` from the JSON body; invalid input is 400 naming the field.
 */
export function defineRoute<Q extends z.ZodType = z.ZodNever, B extends z.ZodType = z.ZodNever>(
  route: Omit<Route, 'handler' | 'input'> & { input?: RouteInput<Q, B>; handler(ctx: RequestContext, input: InputOf<Q, B>): Promise<void> | void },
): Route {
  const { handler, input } = route
  return {
    ...route,
    handler: (ctx) =>
      handler(ctx, {
        query: () => parse(required(input?.query, 'query'), queryOf(ctx.url), 'query'),
        body: async () => parse(required(input?.body, 'body'), await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes), 'body'),
      }),
  }
}

function required<S>(schema: S | undefined, what: string): S {
  if (schema === undefined) throw new Error(`this route declares no ${what} input`)
  return schema
}

/** Validate `value` with `schema`; a top-level `null` field counts as absent, as in the MCP tools. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  // Clients in strict mode send every field, absent ones as null.
  const input = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) : value
  const result = schema.safeParse(input)
  if (!result.success) throw ValidationError.fromZod(result.error, where)
  return result.data
}

/** Query parameters as an object; empty values count as absent. Without `names`, every parameter. */
export function queryOf(url: URL, names?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of url.searchParams) {
    if ((names === undefined || names.includes(name)) && value !== '') out[name] = value
  }
  return out
}

/** JSON for this request, with its CORS headers. */
export function reply(ctx: RequestContext, status: number, data: unknown): void {
  sendJson(ctx.res, status, data, ctx.headers)
}
