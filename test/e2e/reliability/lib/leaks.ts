/**
 * Leak checks for long-poll tools: thousands of watch calls that are cancelled or time out must
 * leave no subscription on the store, no timer, no abort listener, and no memory behind.
 */
import { getEventListeners } from 'node:events'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Observable } from 'rxjs'
import { expect } from 'vitest'
import type { Store, StoreEvent, ToolRegistry } from '../../../../src/index.js'

/** Replace store.changes$ with a copy that counts its live subscriptions. */
export function countSubscriptions(store: Store): { readonly active: number; readonly total: number } {
  const inner = store.changes$
  const counter = { active: 0, total: 0 }
  const counted = new Observable<StoreEvent>((subscriber) => {
    counter.active++
    counter.total++
    const sub = inner.subscribe(subscriber)
    return () => {
      counter.active--
      sub.unsubscribe()
    }
  })
  Object.defineProperty(store, 'changes$', { value: counted })
  return counter
}

/** A gc() without starting node with --expose-gc. */
export function gcFunction(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

export async function settledHeap(gc: () => void): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((r) => setImmediate(r))
  }
  return process.memoryUsage().heapUsed
}

/** Count of active handles and requests by kind (Timeout, FSReqCallback, …). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

export interface WatchRound {
  calls: number
  cancelled: number
  timedOut: number
  found: number
}

/**
 * `calls` watch_annotations calls through registry.call, `concurrency` at a time: every other
 * one is cancelled through its AbortSignal (at once, after a tick, or after a few ms), the rest
 * time out after 1–3 ms. Checks each outcome and that every abort listener was removed.
 */
export async function watchRound(registry: ToolRegistry, calls: number, concurrency: number, tool = 'watch_annotations', args: Record<string, unknown> | ((call: number) => Record<string, unknown>) = {}): Promise<WatchRound> {
  const round: WatchRound = { calls: 0, cancelled: 0, timedOut: 0, found: 0 }
  for (let start = 0; start < calls; start += concurrency) {
    const batch: Promise<void>[] = []
    for (let i = start; i < Math.min(calls, start + concurrency); i++) {
      const controller = new AbortController()
      const cancel = i % 2 === 0
      const call = registry.call(tool, { ...(typeof args === 'function' ? args(i) : args), timeoutMs: cancel ? 60_000 : 1 + (i % 3) }, { signal: controller.signal }).then((outcome) => {
        round.calls++
        if (outcome.ok) {
          const status = (outcome.result as { status: string }).status
          if (status === 'timeout') round.timedOut++
          else round.found++
        } else {
          expect(outcome.error.code).toBe('CANCELLED')
          round.cancelled++
        }
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
      })
      if (cancel) {
        if (i % 6 === 0) controller.abort()
        else if (i % 6 === 2) queueMicrotask(() => controller.abort())
        else setTimeout(() => controller.abort(), i % 5)
      }
      batch.push(call)
    }
    await Promise.all(batch)
  }
  return round
}
