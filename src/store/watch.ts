/**
 * Long-poll helpers, the RxJS way: return at once if the answer exists, otherwise race
 * "the store changed" (instant, via changes$) and a slow poll (which also catches writes from
 * other processes) against a timeout. Unsubscribing stops every timer.
 */
import { asyncScheduler, defer, filter, interval, map, merge, of, race, take, tap, timer, type Observable, type SchedulerLike } from 'rxjs'
import type { Annotation } from './model.js'
import type { StoreEvent } from './events.js'

export const DEFAULT_WATCH_TIMEOUT_MS = 25_000
export const WATCH_POLL_INTERVAL_MS = 500
export const MAX_WATCH_TIMEOUT_MS = 300_000

/** What a watch needs from a store. */
export interface Watchable {
  readonly changes$: Observable<StoreEvent>
  /** Ask the store to look for other processes' writes now (fire and forget). */
  sync(): Promise<void>
}

export interface WatchOptions {
  timeoutMs: number
  pollIntervalMs?: number
  scheduler?: SchedulerLike
}

export type WatchOutcome<T> = { status: 'found'; value: T } | { status: 'timeout' }

/**
 * Emits once: `found` with the first non-undefined value of `probe` (checked now, on every
 * store event and on every poll tick), or `timeout`. Then completes.
 */
export function watchFor<T>(store: Watchable, probe: () => T | undefined, options: WatchOptions): Observable<WatchOutcome<T>> {
  const scheduler = options.scheduler ?? asyncScheduler
  const pollMs = options.pollIntervalMs ?? WATCH_POLL_INTERVAL_MS
  return defer(() => {
    const now = probe()
    if (now !== undefined) return of<WatchOutcome<T>>({ status: 'found', value: now })
    const poll$ = interval(pollMs, scheduler).pipe(
      tap(() => {
        void store.sync()
      }),
    )
    return race(
      merge(poll$, store.changes$).pipe(
        map(probe),
        filter((v): v is T => v !== undefined),
        take(1),
        map((value): WatchOutcome<T> => ({ status: 'found', value })),
      ),
      timer(options.timeoutMs, scheduler).pipe(map((): WatchOutcome<T> => ({ status: 'timeout' }))),
    )
  })
}

export interface PendingSource extends Watchable {
  getPending(sessionId: string): Annotation[]
  getAllPending(): Annotation[]
}

export type PendingWatchResult = { status: 'annotations'; annotations: Annotation[] } | { status: 'timeout' }

/** Wait for pending annotations (of one session, or anywhere). */
export function watchPending(store: PendingSource, options: WatchOptions & { sessionId?: string }): Observable<PendingWatchResult> {
  const probe = (): Annotation[] | undefined => {
    const list = options.sessionId === undefined ? store.getAllPending() : store.getPending(options.sessionId)
    return list.length > 0 ? list : undefined
  }
  return watchFor(store, probe, options).pipe(
    map((o): PendingWatchResult => (o.status === 'found' ? { status: 'annotations', annotations: o.value } : { status: 'timeout' })),
  )
}
