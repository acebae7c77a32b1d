/** Wait for new work: the long-poll form of get_all_pending / get_pending. */
import { asyncScheduler, filter, map, race, startWith, switchMap, take, timer, type Observable, type SchedulerLike } from 'rxjs'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import { Id, type Annotation } from '../store/model.js'
import { filedByCaller } from './annotate.js'
import { watchFor } from '../store/watch.js'
import { DEFAULT_PAGE_LIMIT, Limit, fitPage, pageOutput } from '../views/page.js'
import { defineTool } from './define.js'
import { DetailParam, detailOf, listPage, pageHeader, renderPage, RevOut } from './paging.js'
import { ClampedOut, clampedText, clampedWait, TimeoutParam, waitMs, waitWithProgress } from './wait.js'

export const watchAnnotations = defineTool({
  name: 'watch_annotations',
  showsInApp: true,
  description: 'Wait for pending annotations and return them (at once if some are pending; a burst comes in one answer).',
  input: z.strictObject({
    sessionId: Id.optional().describe('Only this session'),
    timeoutMs: TimeoutParam,
    detail: DetailParam.optional(),
    limit: Limit.optional(),
    authors: z.enum(['all', 'people']).optional().describe("people: no agent's (never your own)"),
  }),
  output: z.object({
    status: z.enum(['annotations', 'timeout']),
    ...partial(pageOutput),
    rev: RevOut,
    clamped: ClampedOut,
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  listening: { waitingFor: (a) => `Waiting for annotations${typeof a.sessionId === 'string' ? ` in session ${a.sessionId}` : ''}` },
  handler: async ({ sessionId, timeoutMs, detail, limit, authors }, ctx) => {
    const { store } = ctx
    if (sessionId !== undefined) store.getSession(sessionId) // unknown session → NOT_FOUND now, not a silent wait
    // Never the caller's own annotations; with `people`, no agent's.
    const leftOut = (a: Annotation) => a.author === 'agent' && (authors === 'people' || filedByCaller(ctx, a))
    const pendingPage = () => {
      if (store.countPending(sessionId) === 0) return undefined
      const pending = sessionId === undefined ? store.getAllPending() : store.getPending(sessionId)
      if (!pending.some(leftOut)) return listPage(store, { sessionId, status: 'pending' }, { detail, limit }, ctx)
      const kept = pending.filter((a) => !leftOut(a))
      if (kept.length === 0) return undefined
      const items = kept.slice(0, limit ?? DEFAULT_PAGE_LIMIT)
      return { ...fitPage({ items, total: kept.length, hasMore: false }, detail ?? 'summary', ctx.limits.byteBudget), rev: store.rev }
    }
    const now = pendingPage()
    if (now && !ctx.signal.aborted) return { status: 'annotations' as const, ...now } // work exists at call time: no added latency
    const outcome = await waitWithProgress(watchFor(store, pendingPage, { timeoutMs: waitMs(timeoutMs, ctx) }), ctx, 'Waiting for annotations')
    if (outcome.status === 'timeout') return { status: 'timeout' as const, rev: store.rev, ...clampedWait(timeoutMs, ctx) }
    // A person often leaves several comments in a row: let the burst settle, so it comes back in one answer.
    if (ctx.limits.burstSettleMs > 0) await waitWithProgress(burstSettled(store, sessionId, ctx.limits.burstSettleMs), ctx, 'Waiting for the burst to settle')
    return { status: 'annotations' as const, ...(pendingPage() ?? outcome.value) }
  },
  render: (r) =>
    r.status === 'timeout'
      ? `No pending annotations yet (timeout, rev ${r.rev}).${clampedText(r.clamped)} Call watch_annotations again: work that arrives meanwhile stays pending (replies and status changes since: watch_changes with sinceRev ${r.rev}).`
      : renderPage(
          { annotations: r.annotations ?? [], count: r.count ?? 0, total: r.total ?? 0, nextCursor: r.nextCursor, truncated: r.truncated },
          pageHeader('pending annotations', { count: r.count ?? 0, total: r.total ?? 0, rev: r.rev }),
          detailOf(r),
          // watch_annotations has no cursor: the rest is a page of get_all_pending.
          (cursor) => `get_all_pending with cursor "${cursor}"`,
        ),
})

/** A burst has settled when no annotation arrived for this long (default; RegistryOptions.burstSettleMs) … */
export const BURST_QUIET_MS = 250
/** … or this long after the first one, whichever comes first. */
export const BURST_MAX_MS = 1_000

/** Emits once: when no annotation was created (in the session, if given) for `quietMs`, at most BURST_MAX_MS from now. */
function burstSettled(store: Pick<Store, 'changes$'>, sessionId: string | undefined, quietMs = BURST_QUIET_MS, scheduler: SchedulerLike = asyncScheduler): Observable<void> {
  const created$ = store.changes$.pipe(filter((e) => e.type === 'annotation.created' && (sessionId === undefined || e.sessionId === sessionId)))
  const quiet$ = created$.pipe(
    startWith(undefined),
    switchMap(() => timer(quietMs, scheduler)),
  )
  return race(quiet$, timer(BURST_MAX_MS, scheduler)).pipe(
    take(1),
    map(() => undefined),
  )
}

function partial<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> }
}
