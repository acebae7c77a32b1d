import { describe, expect, it } from 'vitest'
import { TestScheduler } from 'rxjs/testing'
import { map } from 'rxjs'
import { coalesceBatches } from '../../../src/store/coalesce.js'
import { Store, type Decision, type StoreEvent } from '../../../src/index.js'
import { MemoryAdapter } from '../../../src/store/memory-adapter.js'
import { memoryStore, deterministic } from '../../helpers/store.js'
import { inVirtualTime, parseMarbles } from '../../helpers/marbles.js'

function scheduler() {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected))
}

const label = (e: StoreEvent) => (e.type === 'annotation.status_changed' ? `${e.from}>${e.to}@${e.rev}` : `${e.type}@${e.rev}`)

// The store commits asynchronously, so these diagrams run on fake timers (helpers/marbles.ts):
// each command runs at its frame, and its events must come out at that same frame.
describe('event stream (marbles)', () => {
  it('emits one event per transition, at the moment of the command', async () => {
    const store = memoryStore()
    const events = await inVirtualTime(20, ({ drive, record }) => {
      drive('-a-b-c-d-e-f', {
        a: () => store.createSession({ url: 'http://localhost:5173/' }),
        b: () => store.addAnnotation({ sessionId: 'ses_0001', comment: 'overlaps' }),
        c: () => store.acknowledge('ann_0002', { message: 'on it' }),
        d: () => store.resolve('ann_0002', { summary: 'fixed' }),
        e: () => store.reopen('ann_0002'),
        f: () => store.dismiss('ann_0002', { reason: 'by design' }),
      })
      return record(store.changes$.pipe(map(label)))
    })
    expect(events).toEqual(
      parseMarbles('-a-b-c-d-e-f', {
        a: 'session.created@1',
        b: 'annotation.created@2',
        c: 'pending>acknowledged@3',
        d: 'acknowledged>resolved@4',
        e: 'resolved>pending@5',
        f: 'pending>dismissed@6',
      }),
    )
  })

  it('a refused transition emits nothing', async () => {
    const store = memoryStore()
    const events = await inVirtualTime(20, ({ drive, record }) => {
      drive('-a-b-c-d-e-f', {
        a: () => store.createSession({ url: 'http://localhost:5173/' }),
        b: () => store.addAnnotation({ sessionId: 'ses_0001', comment: 'overlaps' }),
        c: () => store.acknowledge('ann_0002'),
        d: () => store.acknowledge('ann_0002'), // already acknowledged
        e: () => store.reopen('ann_0002'),
        f: () => store.reopen('ann_0002'), // already pending
      })
      return record(store.changes$.pipe(map(label)))
    })
    expect(events).toEqual(
      parseMarbles('-a-b-c---e--', {
        a: 'session.created@1',
        b: 'annotation.created@2',
        c: 'pending>acknowledged@3',
        e: 'acknowledged>pending@4',
      }),
    )
  })

  it('replies and deletes are events too', async () => {
    const store = memoryStore()
    const events = await inVirtualTime(20, ({ drive, record }) => {
      drive('-abcd', {
        a: () => store.createSession({ url: 'http://localhost:5173/' }),
        b: () => store.addAnnotation({ sessionId: 'ses_0001', comment: 'overlaps' }),
        c: () => store.reply('ann_0002', { author: 'human', message: 'still there' }),
        d: () => store.deleteAnnotation('ann_0002'),
      })
      return record(store.changes$.pipe(map(label)))
    })
    expect(events).toEqual(
      parseMarbles('-abcd', {
        a: 'session.created@1',
        b: 'annotation.created@2',
        c: 'annotation.replied@3',
        d: 'annotation.deleted@4',
      }),
    )
  })
})

describe('coalesced writes (marbles)', () => {
  it('the first write starts at once; everything arriving meanwhile goes into the next write', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = hot('a-bc---d|')
      // each write takes 4 frames and reports the batch it wrote
      const writes = source.pipe(coalesceBatches((batch: string[]) => cold('----(x|)', { x: batch.join('') })))
      expectObservable(writes).toBe('----a---b---(c|)', { a: 'a', b: 'bc', c: 'd' })
    })
  })

  it('an idle writer writes a lone item immediately', () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = hot('a-------b|')
      const writes = source.pipe(coalesceBatches((batch: string[]) => cold('--(x|)', { x: batch.join('') })))
      expectObservable(writes).toBe('--a-------(b|)', { a: 'a', b: 'b' })
    })
  })
})

/** A memory adapter whose writes take a while, like a disk. */
class SlowAdapter extends MemoryAdapter {
  override async transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void> {
    await super.transact(decide)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('coalescing in the store', () => {
  it('a burst of 100 mutations is written in at most two batches, every one in order', async () => {
    const adapter = new SlowAdapter()
    const store = new Store(adapter, { snapshot: null, events: [] }, deterministic())
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    adapter.batches.length = 0
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => store.addAnnotation({ sessionId: s.id, comment: `c${i}` })))
    expect(adapter.batches.length).toBeLessThanOrEqual(2)
    expect(adapter.batches.flat().map((e) => e.rev)).toEqual(Array.from({ length: 100 }, (_, i) => i + 2))
    expect(all.map((a) => a.comment)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`))
    await store.close()
  })
})

