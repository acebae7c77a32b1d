/**
 * The REST API under /api: zod-validated JSON in, the store's records out. Bodies are
 * validated here, before anything reaches the store; the store validates again (it is the
 * authority) and its typed errors become statuses in respond.ts.
 */
import path from 'node:path'
import { z } from 'zod'
import { ValidationError } from '../store/errors.js'
import { AddAnnotationInput, ANNOTATION_STATUSES, AnnotationStatus, CreateSessionInput, DeleteInput, Id, INTENTS, LIMITS, ReopenInput, ReplyInput, SEVERITIES } from '../store/model.js'
import { decodeCursor, encodeCursor } from '../store/cursor.js'
import { SEARCH_SORTS, type AnnotationSearch, type Page, type Store } from '../store/store.js'
import { Cursor, DEFAULT_PAGE_LIMIT, Limit } from '../views/page.js'
import { readJson } from './body.js'
import { attachmentRoutes } from './attachments.js'
import type { Presence } from './presence.js'
import { HttpError, sendJson } from './respond.js'
import type { Caller } from './team.js'
import { AcknowledgeInput, DismissInput, ResolveInput } from '../store/model.js'
import { Router, type RouteContext } from './router.js'
import { checkKinds, identityIds, type WhoFilter } from './who.js'
import { EventStream, parseLastEventId } from './sse.js'
import type { Observable } from 'rxjs'

export interface ApiContext extends RouteContext {
  /** CORS headers for this request's origin. */
  headers: Record<string, string>
  /** Who calls (issue 23); absent: local use, every right. */
  caller?: Caller
}

/** Whether the caller is an agent identity (their replies are agent replies). */
function isAgent(ctx: ApiContext): boolean {
  return ctx.caller?.kind === 'identity' && ctx.caller.principal.identity.kind === 'agent'
}

/** A person (not an admin) may delete only what they created. */
function mustOwn(ctx: ApiContext, annotation: { id: string; by?: { id: string; name: string } | undefined }): void {
  const caller = ctx.caller
  if (caller?.kind !== 'identity' || caller.principal.identity.role === 'admin') return
  if (annotation.by?.id !== caller.principal.identity.id) {
    throw new HttpError(403, 'ROLE_FORBIDDEN', `${caller.principal.identity.name} may delete only their own annotations; "${annotation.id}" was created by ${annotation.by?.name ?? 'someone else'}.`, { role: caller.principal.identity.role })
  }
}

import { relativeSource, resolveSource, type SourceOptions } from '../plugin/resolve.js'

export interface ApiOptions {
  store: Store
  maxBodyBytes: number
  keepAliveMs: number
  maxBufferedBytes: number
  presence$: Observable<Presence>
  /** The open event streams (so the server can end them on close). */
  streams: Set<EventStream>
  log(message: string): void
  /** The app's source: a preview build's id manifest to resolve marks through (issue 19). */
  sources?: SourceOptions
}

const NewAnnotationBody = AddAnnotationInput.omit({ sessionId: true })
const ReplyBody = ReplyInput.pick({ message: true, attachments: true, expectedRev: true })
const PageQuery = {
  limit: z.coerce.number().pipe(Limit).optional(),
  cursor: Cursor.optional(),
}
/** A comma-separated list of `values` (`status=pending,acknowledged`); the error names the value and the choices. */
function listOf<T extends string>(values: readonly T[]) {
  return z.string().transform((raw, ctx): T[] => {
    const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '')
    const bad = parts.find((p) => !(values as readonly string[]).includes(p))
    if (bad !== undefined || parts.length === 0) {
      ctx.addIssue({ code: 'custom', message: `${bad === undefined ? 'is empty' : `"${bad}" is not allowed`}: use one or more of ${values.join(', ')}, separated by commas (e.g. ${values.slice(0, 2).join(',')})` })
      return z.NEVER
    }
    return [...new Set(parts)] as T[]
  })
}
const Ids = z.string().transform((raw, ctx): string[] => {
  const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '')
  if (parts.length === 0 || parts.some((p) => p.length > LIMITS.id)) {
    ctx.addIssue({ code: 'custom', message: `must be one or more session ids separated by commas, each at most ${LIMITS.id} characters` })
    return z.NEVER
  }
  return [...new Set(parts)]
})
const ListAnnotationsQuery = z.strictObject({
  status: listOf(ANNOTATION_STATUSES).optional(),
  sessionId: Ids.optional(),
  intent: listOf([...INTENTS, 'none'] as const).optional(),
  severity: listOf([...SEVERITIES, 'none'] as const).optional(),
  author: z.enum(['agent', 'human'], { message: 'must be agent or human (annotations with a reply by the agent, or by the person)' }).optional(),
  by: identityIds('by').optional(),
  agent: identityIds('agent').optional(),
  q: z.string().max(200, 'must be at most 200 characters: search for fewer words').optional(),
  sort: z.enum(SEARCH_SORTS, { message: `must be one of ${SEARCH_SORTS.join(', ')} (by creation time)` }).optional(),
  ...PageQuery,
})
/** Query parameters only a search understands: any of them (or a list of several values) makes the list a search with totals. */
const SEARCH_ONLY = ['intent', 'severity', 'author', 'by', 'agent', 'q', 'sort'] as const
/** The inbox's actions on a selection. Each id is its own store command (one event per change). */
export const BULK_ACTIONS = ['resolve', 'dismiss', 'reopen', 'delete', 'archive'] as const
const BulkBody = z.strictObject({
  action: z.enum(BULK_ACTIONS, { message: `must be one of ${BULK_ACTIONS.join(', ')}` }),
  ids: z.array(Id).min(1, 'must list at least one annotation id').max(500, 'must list at most 500 ids: send the rest in another request'),
  message: z.string().trim().min(1, 'must not be empty or only whitespace').max(LIMITS.message, `must be at most ${LIMITS.message} characters`).optional().describe('A reply the person adds with the change (the dismiss reason)'),
})
const DEFAULT_DISMISS_REASON = 'Dismissed in the inbox.'
const SessionQuery = z.strictObject({ status: AnnotationStatus.optional(), ...PageQuery })
const ListQuery = z.strictObject(PageQuery)

/** The paging fields of a response: count, total and, when more follow, nextCursor. */
function paged<T extends { createdAt: string; id: string }>(page: Page<T>): { count: number; total: number; nextCursor?: string } {
  const out: { count: number; total: number; nextCursor?: string } = { count: page.items.length, total: page.total }
  if (page.hasMore && page.lastKey !== undefined) out.nextCursor = encodeCursor(page.lastKey)
  return out
}

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  // A top-level `null` means absent, as in the MCP tools (clients in strict mode send every field).
  const input = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) : value
  const result = schema.safeParse(input)
  if (!result.success) throw ValidationError.fromZod(result.error, where)
  return result.data
}

/** Query parameters as an object; empty values count as absent. Without `names`, every parameter. */
function query(url: URL, names?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of url.searchParams) {
    if ((names === undefined || names.includes(name)) && value !== '') out[name] = value
  }
  return out
}

export function apiRoutes(options: ApiOptions): Router<ApiContext> {
  const { store, maxBodyBytes } = options
  const body = (ctx: ApiContext) => readJson(ctx.req, ctx.res, maxBodyBytes)
  const ok = (ctx: ApiContext, status: number, data: unknown) => sendJson(ctx.res, status, data, ctx.headers)

  const events = (ctx: ApiContext, sessionId?: string) => {
    const header = ctx.req.headers['last-event-id']
    const since =
      parseLastEventId(Array.isArray(header) ? header[0] : header, 'Last-Event-ID') ??
      parseLastEventId(ctx.url.searchParams.get('lastEventId') ?? undefined, 'lastEventId')
    if (sessionId !== undefined) store.getSession(sessionId) // unknown session → 404 before the stream starts
    const stream = new EventStream(ctx.req, ctx.res, {
      store,
      ...(sessionId !== undefined ? { sessionId } : {}),
      ...(since !== undefined ? { since } : {}),
      presence$: options.presence$,
      keepAliveMs: options.keepAliveMs,
      maxBufferedBytes: options.maxBufferedBytes,
      headers: ctx.headers,
      onClose: (reason) => {
        options.streams.delete(stream)
        if (reason === 'slow') options.log('disconnected an event-stream client that stopped reading')
      },
    })
    options.streams.add(stream)
    stream.start()
  }

  return attachmentRoutes(new Router<ApiContext>(), () => store.blobs)
    .on('GET', '/api', (ctx) =>
      ok(ctx, 200, {
        routes: [
          'GET /api/sessions?limit=&cursor=',
          'POST /api/sessions',
          'GET /api/sessions/:id?status=&limit=&cursor=',
          'POST /api/sessions/:id/annotations',
          'GET /api/sessions/:id/events',
          'GET /api/annotations?status=&sessionId=&intent=&severity=&author=&by=&agent=&q=&sort=&limit=&cursor=',
          'POST /api/annotations/bulk',
          'GET /api/annotations/:id',
          'DELETE /api/annotations/:id',
          'POST /api/annotations/:id/replies',
          'POST /api/annotations/:id/reopen',
          'POST /api/annotations/:id/acknowledge',
          'POST /api/annotations/:id/resolve',
          'POST /api/annotations/:id/dismiss',
          'GET /api/questions',
          'GET /api/events',
          'POST /api/attachments',
          'GET /api/attachments/:sha256',
        ],
        aliases: { '/events': '/api/events', '/sessions/:id/events': '/api/sessions/:id/events', '/questions': '/api/questions' },
      }),
    )
    .on('GET', '/api/sessions', (ctx) => {
      const q = parse(ListQuery, query(ctx.url), 'query')
      const page = store.pageSessions({ after: decodeCursor(q.cursor), limit: q.limit ?? DEFAULT_PAGE_LIMIT })
      ok(ctx, 200, { sessions: page.items, ...paged(page), rev: store.rev })
    })
    .on('POST', '/api/sessions', async (ctx) => {
      const input = parse(CreateSessionInput, await body(ctx), 'body')
      ok(ctx, 201, await store.createSession(input))
    })
    .on('GET', '/api/sessions/:id', (ctx) => {
      const q = parse(SessionQuery, query(ctx.url), 'query')
      const { annotations: _all, ...session } = store.getSession(ctx.params.id!)
      const page = store.pageAnnotations({ sessionId: session.id, status: q.status }, { after: decodeCursor(q.cursor), limit: q.limit ?? DEFAULT_PAGE_LIMIT })
      ok(ctx, 200, { ...session, annotations: page.items, ...paged(page), rev: store.rev })
    })
    .on('POST', '/api/sessions/:id/annotations', async (ctx) => {
      const input = parse(NewAnnotationBody, await body(ctx), 'body')
      if (input.source && options.sources?.manifest) input.source = resolveSource(input.source, options.sources.manifest)
      if (input.source && options.sources?.root) input.source = relativeSource(input.source, path.resolve(options.sources.root))
      ok(ctx, 201, await store.addAnnotation({ ...input, sessionId: ctx.params.id! }))
    })
    .on('GET', '/api/sessions/:id/events', (ctx) => events(ctx, ctx.params.id!))
    .on('GET', '/api/annotations', (ctx) => {
      const params = query(ctx.url)
      const q = parse(ListAnnotationsQuery, params, 'query')
      const { status, sessionId, cursor, limit } = q
      const after = decodeCursor(cursor)
      const pageOptions = { after, limit: limit ?? DEFAULT_PAGE_LIMIT }
      const search = SEARCH_ONLY.some((name) => params[name] !== undefined) || (status?.length ?? 0) > 1 || (sessionId?.length ?? 0) > 1
      if (!search) {
        const page = store.pageAnnotations({ status: status?.[0], sessionId: sessionId?.[0] }, pageOptions)
        return ok(ctx, 200, { annotations: page.items, ...paged(page), rev: store.rev })
      }
      const criteria: AnnotationSearch = {}
      if (status) criteria.statuses = status
      if (sessionId) criteria.sessionIds = sessionId
      if (q.intent) criteria.intents = q.intent
      if (q.severity) criteria.severities = q.severity
      if (q.author) criteria.author = q.author
      if (q.q !== undefined) criteria.q = q.q
      if (q.sort) criteria.sort = q.sort
      const who: WhoFilter = { ...(q.by ? { by: q.by } : {}), ...(q.agent ? { agents: q.agent } : {}) }
      if (who.by || who.agents) checkKinds(store, who)
      if (who.by) criteria.byIds = who.by
      if (who.agents) criteria.agentIds = who.agents
      const page = store.searchAnnotations(criteria, pageOptions)
      ok(ctx, 200, { annotations: page.items, ...paged(page), totals: { sessions: page.sessions, statuses: page.statuses }, rev: store.rev })
    })
    .on('POST', '/api/annotations/bulk', async (ctx) => {
      const { action, ids, message } = parse(BulkBody, await body(ctx), 'body')
      const caller = ctx.caller
      if (caller?.kind === 'identity' && caller.principal.identity.role !== 'admin' && action !== 'reopen' && action !== 'delete') {
        throw new HttpError(403, 'ROLE_FORBIDDEN', `${caller.principal.identity.name} is a person and may not ${action} annotations (an admin or an agent does); a person may reopen them and delete their own.`, { role: caller.principal.identity.role })
      }
      const unique = [...new Set(ids)]
      const done: string[] = []
      const failed: { id: string; code: string; message: string }[] = []
      const fail = (id: string, e: unknown) => {
        const err = e as { code?: unknown; message?: unknown }
        failed.push({ id, code: typeof err.code === 'string' ? err.code : 'INTERNAL', message: typeof err.message === 'string' ? err.message : String(e) })
      }
      if (action === 'archive') {
        // Only finished annotations go to the archive; name the others so the person can resolve or dismiss them first.
        const archivable: string[] = []
        for (const id of unique) {
          try {
            const a = store.getAnnotation(id)
            if (a.status === 'resolved' || a.status === 'dismissed') archivable.push(id)
            else failed.push({ id, code: 'INVALID_TRANSITION', message: `Annotation "${id}" is ${a.status}: only resolved or dismissed annotations can be archived. Resolve or dismiss it first.` })
          } catch (e) {
            fail(id, e)
          }
        }
        if (archivable.length > 0) {
          try {
            done.push(...(await store.archive({ olderThanMs: 0, ids: archivable })).ids)
          } catch (e) {
            for (const id of archivable) fail(id, e)
          }
        }
      } else {
        // One store command per annotation, one after another: each is its own event, as if done one by one.
        for (const id of unique) {
          try {
            if (action === 'resolve') await store.resolve(id, message ? { summary: message } : {}, 'human')
            else if (action === 'dismiss') await store.dismiss(id, { reason: message ?? DEFAULT_DISMISS_REASON }, 'human')
            else if (action === 'reopen') await store.reopen(id, message ? { message } : {})
            else {
              mustOwn(ctx, store.getAnnotation(id))
              await store.deleteAnnotation(id, {})
            }
            done.push(id)
          } catch (e) {
            fail(id, e)
          }
        }
      }
      ok(ctx, 200, { action, done, failed, rev: store.rev })
    })
    .on('GET', '/api/questions', (ctx) => {
      // Questions an agent asked (ask) that the person has not answered yet, oldest first.
      const questions = store.openQuestions()
      ok(ctx, 200, { questions, count: questions.length, rev: store.rev })
    })
    .on('GET', '/api/annotations/:id', (ctx) => ok(ctx, 200, store.getAnnotation(ctx.params.id!)))
    .on('DELETE', '/api/annotations/:id', async (ctx) => {
      const fromBody = (await body(ctx)) as unknown
      const fromQuery = query(ctx.url, ['expectedRev'])
      const input =
        fromQuery.expectedRev !== undefined
          ? parse(DeleteInput, { expectedRev: Number.isNaN(Number(fromQuery.expectedRev)) ? fromQuery.expectedRev : Number(fromQuery.expectedRev) }, 'query')
          : parse(DeleteInput, fromBody, 'body')
      mustOwn(ctx, store.getAnnotation(ctx.params.id!))
      ok(ctx, 200, await store.deleteAnnotation(ctx.params.id!, input))
    })
    .on('POST', '/api/annotations/:id/replies', async (ctx) => {
      const input = parse(ReplyBody, await body(ctx), 'body')
      ok(ctx, 201, await store.reply(ctx.params.id!, { ...input, author: isAgent(ctx) ? 'agent' : 'human' }))
    })
    .on('POST', '/api/annotations/:id/reopen', async (ctx) => {
      const input = parse(ReopenInput, await body(ctx), 'body')
      ok(ctx, 200, await store.reopen(ctx.params.id!, input))
    })
    .on('GET', '/api/events', (ctx) => events(ctx))
    // The agent side of REST (issue 23): what the MCP tools acknowledge, resolve and dismiss do.
    .on('POST', '/api/annotations/:id/acknowledge', async (ctx) => ok(ctx, 200, await store.acknowledge(ctx.params.id!, parse(AcknowledgeInput, await body(ctx), 'body'))))
    .on('POST', '/api/annotations/:id/resolve', async (ctx) => ok(ctx, 200, await store.resolve(ctx.params.id!, parse(ResolveInput, await body(ctx), 'body'), isAgent(ctx) ? 'agent' : 'human')))
    .on('POST', '/api/annotations/:id/dismiss', async (ctx) => ok(ctx, 200, await store.dismiss(ctx.params.id!, parse(DismissInput, await body(ctx), 'body'), isAgent(ctx) ? 'agent' : 'human')))
}
