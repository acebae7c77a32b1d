import { z } from 'zod'
import { firstValueFrom, fromEvent, interval, takeUntil, tap, type Observable } from 'rxjs'
import { Annotation, Id } from '../store/model.js'
import { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS, watchPending } from '../store/watch.js'
import { defineTool, type ToolContext } from './define.js'

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
    'Wait until there are pending annotations, then return them (oldest first). Returns at once if some are already ' +
    'pending; otherwise wakes within milliseconds of a new one, or returns {status:"timeout"} after timeoutMs ' +
    `(default ${DEFAULT_WATCH_TIMEOUT_MS} ms). Call it again after a timeout to keep listening. Optionally limited to one session.`,
  input: z.strictObject({
    sessionId: Id.optional().describe('Only this session (default: every session)'),
    timeoutMs: TimeoutMs.optional().describe(`How long to wait, 1…${MAX_WATCH_TIMEOUT_MS} ms (default ${DEFAULT_WATCH_TIMEOUT_MS})`),
  }),
  output: z.object({
    status: z.enum(['annotations', 'timeout']),
    annotations: z.array(Annotation).optional(),
    count: z.number().int().optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ sessionId, timeoutMs }, ctx) => {
    const { store } = ctx
    if (sessionId !== undefined) store.getSession(sessionId) // unknown session → NOT_FOUND now, not a silent wait
    const outcome = await waitWithProgress(watchPending(store, { sessionId, timeoutMs: timeoutMs ?? DEFAULT_WATCH_TIMEOUT_MS }), ctx, 'Waiting for annotations')
    return outcome.status === 'annotations' ? { status: 'annotations' as const, annotations: outcome.annotations, count: outcome.annotations.length } : { status: 'timeout' as const }
  },
})

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
