/**
 * The REST API under /api, as routes of the table (routes.ts): zod-validated JSON in, the
 * store's records out. Each route declares its query and body schemas; they are checked before
 * anything reaches the store, the store validates again (it is the authority), and its typed
 * errors become statuses in respond.ts.
 */
import path from 'node:path'
import { z } from 'zod'
import { AcknowledgeInput, AddAnnotationInput, ANNOTATION_STATUSES, AnnotationStatus, CreateSessionInput, DeleteInput, DismissInput, Id, INTENTS, LIMITS, ReopenInput, ReplyInput, ResolveInput, SEVERITIES } from '../store/model.js'
import { decodeCursor, encodeCursor } from '../store/cursor.js'
import { SEARCH_SORTS, type AnnotationSearch, type Page } from '../store/store.js'
import { relativeSource, resolveSource } from '../sources/resolve.js'
import { Cursor, DEFAULT_PAGE_LIMIT, Limit } from '../views/page.js'
import { reproTest } from '../views/repro.js'
import { ValidationError } from '../store/errors.js'
import { readJson } from './body.js'
import { defineRoute, parse, queryOf, reply, type RequestContext, type Route } from './context.js'
import { HttpError } from './respond.js'
import { checkKinds, identityIds, type WhoFilter } from './who.js'
import { EventStream, parseLastEventId } from './sse.js'
import { requireRole, seesPermissions, seesRoster } from './callers.js'
import { openPermissionsFrame } from './permissions.js'
import { isIdentityEvent, isPermissionEvent, type StoreEvent } from '../store/events.js'

/** Whether the caller is an agent identity (their replies are agent replies). */
function isAgent(ctx: RequestContext): boolean {
  return ctx.caller.kind === 'identity' && ctx.caller.principal.identity.kind === 'agent'
}

/** A person (not an admin) may delete only what they created. */
function mustOwn(ctx: RequestContext, annotation: { id: string; by?: { id: string; name: string } | undefined }): void {
  const caller = ctx.caller
  if (caller.kind !== 'identity' || caller.principal.identity.role === 'admin') return
  if (annotation.by?.id !== caller.principal.identity.id) {
    throw new HttpError(403, 'ROLE_FORBIDDEN', `${caller.principal.identity.name} may delete only their own annotations; "${annotation.id}" was created by ${annotation.by?.name ?? 'someone else'}.`, { role: caller.principal.identity.role })
  }
}

const NewAnnotationBody = AddAnnotationInput.omit({ sessionId: true })
const ReplyBody = ReplyInput.pick({ message: true, attachments: true, element: true, source: true, expectedRev: true })
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
const BULK_ACTIONS = ['resolve', 'dismiss', 'reopen', 'delete', 'archive'] as const
const BulkBody = z.strictObject({
  action: z.enum(BULK_ACTIONS, { message: `must be one of ${BULK_ACTIONS.join(', ')}` }),
  ids: z.array(Id).min(1, 'must list at least one annotation id').max(500, 'must list at most 500 ids: send the rest in another request'),
  message: z.string().trim().min(1, 'must not be empty or only whitespace').max(LIMITS.message, `must be at most ${LIMITS.message} characters`).optional().describe('A reply the person adds with the change (the dismiss reason)'),
})
const DEFAULT_DISMISS_REASON = 'Dismissed in the inbox.'
const SessionQuery = z.strictObject({ status: AnnotationStatus.optional(), ...PageQuery })
/** The sessions' list: a page at a time, or only one page's (its URL exactly: how the overlay finds its session). */
const SessionsQuery = z.strictObject({ ...PageQuery, url: z.string().min(1).max(LIMITS.url).optional().describe("Only the sessions of this page: the URL exactly as the session has it (origin + pathname)") })

/** The paging fields of a response: count, total and, when more follow, nextCursor. */
function paged<T extends { createdAt: string; id: string }>(page: Page<T>): { count: number; total: number; nextCursor?: string } {
  const out: { count: number; total: number; nextCursor?: string } = { count: page.items.length, total: page.total }
  if (page.hasMore && page.lastKey !== undefined) out.nextCursor = encodeCursor(page.lastKey)
  return out
}

/**
 * The live event stream (all sessions, or one), resuming after Last-Event-ID / ?lastEventId. With
 * `?permissions=1` (a person's page that shows the agents' permission prompts, on the one
 * connection it has open anyway): first how many requests wait for an answer now (a
 * `permission.open` frame, when any do), and on a session's stream the permission events too.
 */
function events(ctx: RequestContext, sessionId?: string): void {
  const { store, streams } = ctx.app
  const header = ctx.req.headers['last-event-id']
  const since =
    parseLastEventId(Array.isArray(header) ? header[0] : header, 'Last-Event-ID') ??
    parseLastEventId(ctx.url.searchParams.get('lastEventId') ?? undefined, 'lastEventId')
  const withPermissions = ctx.url.searchParams.get('permissions')
  if (withPermissions !== null && withPermissions !== '1') throw new ValidationError([{ path: 'permissions', message: "must be 1 (the agents' permission requests too: how many wait now, then live) or left out" }])
  if (withPermissions !== null) requireRole(ctx.caller, ['person'], "see the agents' permission requests (leave out ?permissions=1)")
  if (sessionId !== undefined) store.getSession(sessionId) // unknown session → 404 before the stream starts
  const roster = seesRoster(ctx.caller)
  const permissions = seesPermissions(ctx.caller)
  const first = withPermissions !== null ? openPermissionsFrame(store) : undefined
  const hidden = roster && permissions ? undefined : (event: StoreEvent) => (!roster && isIdentityEvent(event)) || (!permissions && isPermissionEvent(event))
  const stream = new EventStream(ctx.req, ctx.res, {
    store,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(hidden ? { hide: hidden } : {}),
    ...(first ? { first } : {}),
    ...(withPermissions !== null && sessionId !== undefined ? { also: isPermissionEvent } : {}),
    presence$: ctx.app.presence.presence$,
    keepAliveMs: ctx.app.keepAliveMs,
    maxBufferedBytes: ctx.app.maxBufferedBytes,
    headers: ctx.headers,
    onClose: (reason) => {
      streams.delete(stream)
      if (reason === 'slow') ctx.app.log('disconnected an event-stream client that stopped reading')
    },
  })
  streams.add(stream)
  stream.start()
}

const READ = { kind: 'caller' } as const
const PERSON = ['person'] as const
const AGENT = { kind: 'caller', roles: ['agent'], what: 'use the agent routes' } as const

/** Which side made a change: an agent identity's, or the person's. */
const sideOf = (ctx: RequestContext) => (isAgent(ctx) ? 'agent' : 'human')

export const restRoutes: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/api/sessions',
    tool: 'list_sessions',
    access: READ,
    readAfterWrite: true,
    summary: 'The sessions, oldest first, a page at a time (?url=: only that page\'s)',
    input: { query: SessionsQuery },
    handler: (ctx, input) => {
      const { store } = ctx.app
      const q = input.query()
      const page = store.pageSessions({ after: decodeCursor(q.cursor), limit: q.limit ?? DEFAULT_PAGE_LIMIT }, q.url)
      reply(ctx, 200, { sessions: page.items, ...paged(page), rev: store.rev })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions',
    access: { kind: 'caller', roles: PERSON, what: 'create annotations' },
    summary: 'Start a session (a page the person annotates)',
    input: { body: CreateSessionInput },
    handler: async (ctx, input) => reply(ctx, 201, await ctx.app.store.createSession(await input.body())),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:id',
    tool: 'get_session',
    access: READ,
    readAfterWrite: true,
    summary: 'A session with a page of its annotations (filtered by status)',
    input: { query: SessionQuery },
    handler: (ctx, input) => {
      const { store } = ctx.app
      const q = input.query()
      const { annotations: _all, ...session } = store.getSession(ctx.params.id!)
      const page = store.pageAnnotations({ sessionId: session.id, status: q.status }, { after: decodeCursor(q.cursor), limit: q.limit ?? DEFAULT_PAGE_LIMIT })
      reply(ctx, 200, { ...session, annotations: page.items, ...paged(page), rev: store.rev })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/sessions/:id/annotations',
    access: { kind: 'caller', roles: PERSON, what: 'create annotations' },
    summary: 'Add an annotation to a session (its source location resolved through the id manifest)',
    input: { body: NewAnnotationBody },
    handler: async (ctx, input) => {
      const { store, sources } = ctx.app
      const body = await input.body()
      if (body.source && sources?.manifest) body.source = resolveSource(body.source, sources.manifest)
      if (body.source && sources?.root) body.source = relativeSource(body.source, path.resolve(sources.root))
      reply(ctx, 201, await store.addAnnotation({ ...body, sessionId: ctx.params.id! }))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/sessions/:id/events',
    tool: 'get_changes',
    aliases: ['/sessions/:id/events'],
    access: READ,
    readAfterWrite: true,
    stream: true,
    summary: "One session's live events (Server-Sent Events; resumes after Last-Event-ID; with `?permissions=1`, a person's: first how many of the agents' permission requests wait now, then those events too, replayed and live)",
    handler: (ctx) => events(ctx, ctx.params.id!),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/annotations',
    tool: 'get_all_pending',
    access: READ,
    readAfterWrite: true,
    summary: 'Annotations, a page at a time; any search parameter makes it a search with totals',
    input: { query: ListAnnotationsQuery },
    handler: (ctx, input) => {
      const { store } = ctx.app
      const params = queryOf(ctx.url)
      const q = input.query()
      const { status, sessionId, cursor, limit } = q
      const after = decodeCursor(cursor)
      const pageOptions = { after, limit: limit ?? DEFAULT_PAGE_LIMIT }
      const search = SEARCH_ONLY.some((name) => params[name] !== undefined) || (status?.length ?? 0) > 1 || (sessionId?.length ?? 0) > 1
      if (!search) {
        const page = store.pageAnnotations({ status: status?.[0], sessionId: sessionId?.[0] }, pageOptions)
        return reply(ctx, 200, { annotations: page.items, ...paged(page), rev: store.rev })
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
      reply(ctx, 200, { annotations: page.items, ...paged(page), totals: { sessions: page.sessions, statuses: page.statuses }, rev: store.rev })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/annotations/bulk',
    access: { kind: 'caller', roles: PERSON, what: 'change annotations in bulk' },
    summary: 'Resolve, dismiss, reopen, delete or archive a selection (one store command per annotation)',
    input: { body: BulkBody },
    handler: async (ctx, input) => bulk(ctx, await input.body()),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/questions',
    tool: 'get_all_pending',
    aliases: ['/questions'],
    access: READ,
    readAfterWrite: true,
    summary: 'Questions an agent asked that the person has not answered yet, oldest first',
    handler: (ctx) => {
      const { store } = ctx.app
      const questions = store.openQuestions()
      reply(ctx, 200, { questions, count: questions.length, rev: store.rev })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/annotations/:id',
    tool: 'get_annotation',
    access: READ,
    readAfterWrite: true,
    summary: 'One annotation with its thread',
    handler: (ctx) => reply(ctx, 200, ctx.app.store.getAnnotation(ctx.params.id!)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/annotations/:id/repro',
    tool: 'get_annotation',
    access: READ,
    readAfterWrite: true,
    summary: 'Its steps to reproduce as a Playwright Test file (TypeScript) that ends asserting the element is visible',
    handler: (ctx) => {
      const text = reproTest(ctx.app.store.getAnnotation(ctx.params.id!))
      const id = ctx.params.id!.replace(/[^\w-]/g, '_')
      ctx.res.writeHead(200, {
        'Content-Type': 'text/typescript; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(text)),
        'Content-Disposition': `inline; filename="repro-${id}.spec.ts"`,
        'Cache-Control': 'no-store',
        ...ctx.headers,
      })
      ctx.res.end(text)
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/annotations/:id',
    access: { kind: 'caller', roles: PERSON, what: 'delete annotations' },
    summary: 'Delete an annotation (a person: only their own); expectedRev in the query or the body',
    input: { body: DeleteInput },
    handler: async (ctx, input) => {
      const { store } = ctx.app
      const fromQuery = queryOf(ctx.url, ['expectedRev'])
      let body: DeleteInput
      if (fromQuery.expectedRev === undefined) body = await input.body()
      else {
        await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes) // a body, if any, is still read (and must be JSON)
        body = parse(DeleteInput, { expectedRev: Number.isNaN(Number(fromQuery.expectedRev)) ? fromQuery.expectedRev : Number(fromQuery.expectedRev) }, 'query')
      }
      mustOwn(ctx, store.getAnnotation(ctx.params.id!))
      reply(ctx, 200, await store.deleteAnnotation(ctx.params.id!, body))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/replies',
    tool: 'reply',
    access: { kind: 'caller', roles: ['person', 'agent'], what: 'reply' },
    summary: "Reply in an annotation's thread (an agent's reply counts as the agent's)",
    input: { body: ReplyBody },
    handler: async (ctx, input) => reply(ctx, 201, await ctx.app.store.reply(ctx.params.id!, { ...(await input.body()), author: sideOf(ctx) })),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/reopen',
    access: { kind: 'caller', roles: PERSON, what: 'reopen annotations' },
    summary: 'Reopen a resolved or dismissed annotation',
    input: { body: ReopenInput },
    handler: async (ctx, input) => reply(ctx, 200, await ctx.app.store.reopen(ctx.params.id!, await input.body())),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/events',
    tool: 'get_changes',
    aliases: ['/events'],
    access: READ,
    readAfterWrite: true,
    stream: true,
    summary: "Every live event (Server-Sent Events; resumes after Last-Event-ID); identities and credentials to admins only, the agents' permission requests and answers not to agents; with `?permissions=1`, a person's: first how many permission requests wait now",
    handler: (ctx) => events(ctx),
  }),
  // The agent side of REST: what the MCP tools acknowledge, resolve and dismiss do.
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/acknowledge',
    tool: 'acknowledge',
    access: AGENT,
    summary: 'The agent has seen an annotation and works on it',
    input: { body: AcknowledgeInput },
    handler: async (ctx, input) => reply(ctx, 200, await ctx.app.store.acknowledge(ctx.params.id!, await input.body())),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/resolve',
    tool: 'resolve',
    access: AGENT,
    summary: 'Resolve an annotation with a summary of what was done',
    input: { body: ResolveInput },
    handler: async (ctx, input) => reply(ctx, 200, await ctx.app.store.resolve(ctx.params.id!, await input.body(), sideOf(ctx))),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/dismiss',
    tool: 'dismiss',
    access: AGENT,
    summary: 'Dismiss an annotation with the reason',
    input: { body: DismissInput },
    handler: async (ctx, input) => reply(ctx, 200, await ctx.app.store.dismiss(ctx.params.id!, await input.body(), sideOf(ctx))),
  }),
]

/** The inbox's actions on a selection. Each id is its own store command (one event per change). */
async function bulk(ctx: RequestContext, { action, ids, message }: z.output<typeof BulkBody>): Promise<void> {
  const { store } = ctx.app
  const caller = ctx.caller
  if (caller.kind === 'identity' && caller.principal.identity.role !== 'admin' && action !== 'reopen' && action !== 'delete') {
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
  reply(ctx, 200, { action, done, failed, rev: store.rev })
}
