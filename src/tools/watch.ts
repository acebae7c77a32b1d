/** Wait for new work: the long-poll form of get_all_pending / get_pending. */
import { z } from 'zod'
import { Id } from '../store/model.js'
import { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS, watchFor } from '../store/watch.js'
import { Limit, pageOutput } from '../views/page.js'
import { Detail } from '../views/summary.js'
import { defineTool } from './define.js'
import { detailOf, listPage, pageHeader, renderPage } from './paging.js'
import { TimeoutMs, waitWithProgress } from './wait.js'

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
  listening: true,
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
      : renderPage({ annotations: r.annotations ?? [], count: r.count ?? 0, total: r.total ?? 0, nextCursor: r.nextCursor, truncated: r.truncated }, pageHeader('pending annotations', { count: r.count ?? 0, total: r.total ?? 0 }), detailOf(r)),
})

function partial<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> }
}
