import { z } from 'zod'
import { firstValueFrom, fromEvent, interval, takeUntil, tap, type Observable } from 'rxjs'
import { Id } from '../store/model.js'
import { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS, watchFor } from '../store/watch.js'
import { defineTool, type ToolContext } from './define.js'
import { listPage } from './annotations.js'
import { pageHeader, pageOutput, renderPage, Limit } from './paging.js'
import { Detail } from './summary.js'

export { DEFAULT_WATCH_TIMEOUT_MS, WATCH_POLL_INTERVAL_MS } from '../store/watch.js'
/** While a long call waits, a progress notification this often keeps clients with idle timeouts patient. */
export const PROGRESS_INTERVAL_MS = 5_000

export const TimeoutMs = z
  .number()
  .int('must be a whole number of milliseconds')
  .min(1, 'must be at least 1 ms')
  .max(MAX_WATCH_TIMEOUT_MS, `must be at most ${MAX_WATCH_TIMEOUT_MS} ms (5 minutes)`)

export const watchAnnotations = defineTool({
  name: 'watch_annotations',
  title: 'Wait for new annotations',
  description:
    'Wait until there are pending annotations, then return them (oldest first, as summaries; a page of `limit` with ' +
    '`total` and `nextCursor` for get_all_pending/get_pending when there are more). Returns at once if some are already ' +
    'pending; otherwise wakes within milliseconds of a new one, or returns {status:"timeout"} after timeoutMs ' +
    `(default ${DEFAULT_WATCH_TIMEOUT_MS} ms). Call it again after a timeout to keep listening. Optionally limited to one session.`,
  input: z.strictObject({
    sessionId: Id.optional().describe('Only this session (default: every session)'),
    timeoutMs: TimeoutMs.optional().describe(`How long to wait, 1…${MAX_WATCH_TIMEOUT_MS} ms (default ${DEFAULT_WATCH_TIMEOUT_MS})`),
    detail: Detail.optional(),
    limit: Limit.optional(),
  }),
  output: z.object({
    status: z.enum(['annotations', 'timeout']),
    ...partial(pageOutput),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ sessionId, timeoutMs, detail, limit }, ctx) => {
    const { store } = ctx
    if (sessionId !== undefined) store.getSession(sessionId) // unknown session → NOT_FOUND now, not a silent wait
    const pendingPage = () => {
      if (store.countPending(sessionId) === 0) return undefined
      return listPage(store, { sessionId, status: 'pending' }, { detail, limit }, ctx)
    }
    const outcome = await waitWithProgress(watchFor(store, pendingPage, { timeoutMs: timeoutMs ?? DEFAULT_WATCH_TIMEOUT_MS }), ctx, 'Waiting for annotations')
    return outcome.status === 'found' ? { status: 'annotations' as const, ...outcome.value } : { status: 'timeout' as const }
  },
  render: (r) =>
    r.status === 'timeout'
      ? 'No pending annotations yet (timeout). Call watch_annotations again to keep listening.'
      : renderPage({ annotations: r.annotations ?? [], count: r.count ?? 0, total: r.total ?? 0, nextCursor: r.nextCursor, truncated: r.truncated }, pageHeader('pending annotations', { count: r.count ?? 0, total: r.total ?? 0 }), detail(r)),
})

function partial<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> }
}

function detail(r: { annotations?: readonly object[] }): Detail {
  const first = r.annotations?.[0]
  return first && !('replyCount' in first) ? 'full' : 'summary'
}

/**
 * Wait for the first value of `watch$`, sending a progress notification every
 * PROGRESS_INTERVAL_MS meanwhile, and stopping everything at once if the call is cancelled.
 */
export async function waitWithProgress<T>(watch$: Observable<T>, ctx: ToolContext, what: string): Promise<T> {
  if (ctx.signal.aborted) throw abortError()
  const aborted$ = fromEvent(ctx.signal, 'abort')
  const started = Date.now()
  const ticker = interval(PROGRESS_INTERVAL_MS)
    .pipe(
      takeUntil(aborted$),
      tap((n) => ctx.progress(n + 1, `${what} (${Math.round((Date.now() - started) / 1000)} s)…`)),
    )
    .subscribe()
  try {
    return await firstValueFrom(watch$.pipe(takeUntil(aborted$)), { defaultValue: ABORTED as T })
      .then((value) => {
        if (value === ABORTED) throw abortError()
        return value
      })
  } finally {
    ticker.unsubscribe()
  }
}

const ABORTED = Symbol('aborted')

function abortError(): Error {
  const e = new Error('The call was cancelled.')
  e.name = 'AbortError'
  return e
}
