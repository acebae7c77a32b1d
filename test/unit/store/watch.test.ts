import { afterEach, describe, expect, it, vi } from 'vitest'
import { TestScheduler } from 'rxjs/testing'
import { Subject, firstValueFrom, map, type Observable } from 'rxjs'
import { type StoreEvent } from '../../../src/index.js'
import { watchFor, watchPending, type Watchable } from '../../../src/store/watch.js'
import { memoryStore } from '../../helpers/store.js'
import { inVirtualTime, parseMarbles } from '../../helpers/marbles.js'

function scheduler() {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected))
}

afterEach(() => {
  vi.useRealTimers()
})

describe('watchPending (marbles)', () => {
  it('returns at once when pending annotations exist', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://x/' })
    await store.addAnnotation({ sessionId: s.id, comment: 'c' })
    scheduler().run(({ expectObservable }) => {
      const watch$ = watchPending(store, { timeoutMs: 25_000, scheduler: undefined }).pipe(map((r) => r.status))
      expectObservable(watch$).toBe('(a|)', { a: 'annotations' })
    })
  })

  // The store commits asynchronously: this one runs on fake timers (helpers/marbles.ts).
  it('wakes on the store event, not on the next poll', async () => {
    const store = memoryStore()
    await store.createSession({ url: 'http://x/' })
    const outcome = await inVirtualTime(30_000, ({ drive, record }) => {
      drive('-- 100ms a', { a: () => store.addAnnotation({ sessionId: 'ses_0001', comment: 'new' }) })
      return record(watchPending(store, { timeoutMs: 25_000 }).pipe(map((r) => (r.status === 'annotations' ? r.annotations.map((a) => a.comment).join() : r.status))))
    })
    expect(outcome).toEqual(parseMarbles('-- 100ms (a|)', { a: 'new' }))
  })

  it('finds work on the poll when no event announces it (another process)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      let pending: string[] = []
      const synced: number[] = []
      const fake: Watchable & { getPending(): never[]; getAllPending(): { comment: string }[] } = {
        changes$: new Subject<StoreEvent>(),
        sync: async () => {
          synced.push(1)
        },
        getPending: () => [],
        getAllPending: () => pending.map((comment) => ({ comment })),
      }
      cold('700ms a').subscribe(() => (pending = ['written elsewhere']))
      const watch$ = watchPending(fake as never, { timeoutMs: 25_000 }).pipe(map((r) => r.status))
      // polls at 500 ms (nothing yet) and 1000 ms (found)
      expectObservable(watch$).toBe('1000ms (a|)', { a: 'annotations' })
    })
  })

  it('times out', () => {
    scheduler().run(({ expectObservable }) => {
      const store = memoryStore()
      expectObservable(watchPending(store, { timeoutMs: 3_000 })).toBe('3000ms (t|)', { t: { status: 'timeout' } })
    })
  })

  it('a session watch ignores other sessions', async () => {
    const store = memoryStore()
    await store.createSession({ url: 'http://a/' })
    await store.createSession({ url: 'http://b/' })
    const outcome = await inVirtualTime(20_000, ({ drive, record }) => {
      drive('-a-b', {
        a: () => store.addAnnotation({ sessionId: 'ses_0002', comment: 'a' }),
        b: () => store.addAnnotation({ sessionId: 'ses_0001', comment: 'b' }),
      })
      return record(watchPending(store, { sessionId: 'ses_0001', timeoutMs: 10_000 }).pipe(map((r) => (r.status === 'annotations' ? r.annotations[0]!.comment : r.status))))
    })
    expect(outcome).toEqual(parseMarbles('---(b|)', { b: 'b' }))
  })

  it('unsubscribing stops listening to the store', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const changes = hot<StoreEvent>('-------')
      const source: Watchable = { changes$: changes as unknown as Observable<StoreEvent>, sync: async () => {} }
      expectObservable(watchFor(source, () => undefined, { timeoutMs: 10_000 }), '^--!').toBe('---')
      expectSubscriptions(changes.subscriptions).toBe('^--!')
    })
  })
})

describe('watch timers (fake timers)', () => {
  it('leaves no timer behind when cancelled or timed out', async () => {
    vi.useFakeTimers()
    const store = memoryStore()
    const sub = watchPending(store, { timeoutMs: 60_000 }).subscribe()
    expect(vi.getTimerCount()).toBe(2) // the poll and the timeout
    sub.unsubscribe()
    expect(vi.getTimerCount()).toBe(0)

    const done = firstValueFrom(watchPending(store, { timeoutMs: 1_000 }))
    await vi.advanceTimersByTimeAsync(1_000)
    await expect(done).resolves.toEqual({ status: 'timeout' })
    expect(vi.getTimerCount()).toBe(0)
  })
})
