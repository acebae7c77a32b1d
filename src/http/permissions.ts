/**
 * The person's side of the permission relay: an agent's `marginalia mcp` wrote the request it got
 * from Claude Code (`permission.requested`); the overlay and the inbox list the requests, follow
 * them live, and answer here. Only a person answers (an agent's token gets 403: an agent must
 * never approve its own actions); an answer is given once and only before the request expires.
 * The answer is a store event the agent's process hears, whichever process serves this route.
 */
import { z } from 'zod'
import { ValidationError } from '../store/errors.js'
import { PermissionAnswerInput, permissionState, type PermissionRecord } from '../store/permissions.js'
import { isPermissionEvent } from '../store/events.js'
import type { Store } from '../store/store.js'
import { defineRoute, reply, type RequestContext, type Route } from './context.js'
import { parseLastEventId, EventStream } from './sse.js'

const PERSON = { kind: 'caller', roles: ['person'], what: 'answer an agent\'s permission requests' } as const

/** A request as the page shows it: with where it stands now. */
function shown(record: PermissionRecord, now: string): PermissionRecord & { state: ReturnType<typeof permissionState> } {
  return { ...record, state: permissionState(record, now) }
}

/** How many requests wait for an answer now. */
export function openPermissions(store: Store): number {
  const now = new Date().toISOString()
  return store.listPermissions().filter((r) => permissionState(r, now) === 'open').length
}

/**
 * A `permission.open` frame saying how many requests wait for an answer now, when any do: what a
 * stream that follows only live permission events starts with, at every (re)connect.
 */
export function openPermissionsFrame(store: Store): string | undefined {
  const waiting = openPermissions(store)
  return waiting > 0 ? `event: permission.open\ndata: ${JSON.stringify({ open: waiting })}\n\n` : undefined
}

/**
 * Only the permission events (a page showing prompts needs nothing else), resuming after
 * Last-Event-ID; or, with `?open=1`, first how many requests wait for an answer now (a
 * `permission.open` event, when any do) and then live events, without a replay: what a page
 * that only needs to know when to show its prompts asks for, at every (re)connect.
 */
function permissionEvents(ctx: RequestContext): void {
  const { store, streams } = ctx.app
  const open = ctx.url.searchParams.get('open')
  if (open !== null && open !== '1') throw new ValidationError([{ path: 'open', message: 'must be 1 (how many requests are open now, then live events) or left out (a replay after lastEventId)' }])
  const header = ctx.req.headers['last-event-id']
  const since =
    parseLastEventId(Array.isArray(header) ? header[0] : header, 'Last-Event-ID') ??
    parseLastEventId(ctx.url.searchParams.get('lastEventId') ?? undefined, 'lastEventId')
  const first = open !== null ? openPermissionsFrame(store) : undefined
  const stream = new EventStream(ctx.req, ctx.res, {
    store,
    ...(since !== undefined && open === null ? { since } : {}),
    ...(first ? { first } : {}),
    hide: (event) => !isPermissionEvent(event),
    keepAliveMs: ctx.app.keepAliveMs,
    maxBufferedBytes: ctx.app.maxBufferedBytes,
    headers: ctx.headers,
    onClose: (reason) => {
      streams.delete(stream)
      if (reason === 'slow') ctx.app.log('disconnected a permission-stream client that stopped reading')
    },
  })
  streams.add(stream)
  stream.start()
}

export const permissionRoutes: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/api/permissions',
    access: PERSON,
    readAfterWrite: true,
    summary: "The agents' recent permission requests (open, answered, expired), oldest first, with the store's rev",
    input: { query: z.strictObject({}) },
    handler: (ctx) => {
      const now = new Date().toISOString()
      const { store } = ctx.app
      reply(ctx, 200, { rev: store.rev, now, permissions: store.listPermissions().map((r) => shown(r, now)) })
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/permissions/events',
    access: PERSON,
    readAfterWrite: true,
    stream: true,
    summary: 'Permission requests and answers as they happen (Server-Sent Events; resumes after Last-Event-ID; with `?open=1`, first how many wait for an answer now, instead of a replay)',
    handler: (ctx) => permissionEvents(ctx),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/permissions/:requestId',
    access: PERSON,
    summary: "Answer an agent's permission request: allow or deny (once, before it expires; people only)",
    input: { body: PermissionAnswerInput },
    handler: async (ctx, input) => {
      const record = await ctx.app.store.answerPermission(ctx.params.requestId!, await input.body())
      reply(ctx, 200, shown(record, new Date().toISOString()))
    },
  }),
]
