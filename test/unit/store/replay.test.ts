import { describe, expect, it } from 'vitest'
import { applyEvent, applyEvents, emptyState, type StoreState } from '../../../src/store/reducer.js'
import { shardValues } from '../../../src/store/shards.js'
import type { StoreEvent } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'

/** Every event of a store's life: sessions, annotations created, replied, moved through statuses, deleted. */
async function history(): Promise<StoreEvent[]> {
  const store = memoryStore()
  const events: StoreEvent[] = []
  store.changes$.subscribe((e) => events.push(e))
  const s = await store.createSession({ url: 'http://localhost:5173/' })
  for (let i = 0; i < 30; i++) {
    const a = await store.addAnnotation({ sessionId: s.id, comment: `note ${i}` })
    if (i % 2 === 0) await store.acknowledge(a.id, { message: 'on it' })
    if (i % 3 === 0) await store.reply(a.id, { author: 'agent', message: `reply ${i}` })
    if (i % 4 === 0) await store.resolve(a.id, { summary: 'fixed' })
    if (i % 5 === 0) await store.deleteAnnotation(a.id)
  }
  // Created, changed and deleted inside one batch: the batch must not keep a stale copy.
  const b = await store.addAnnotation({ sessionId: s.id, comment: 'short-lived' })
  await store.reply(b.id, { author: 'human', message: 'hm' })
  await store.deleteAnnotation(b.id)
  await store.close()
  return events
}

function plain(state: StoreState) {
  return { rev: state.rev, sessions: [...shardValues(state.sessions)], annotations: [...shardValues(state.annotations)] }
}

describe('start-up replay applies a whole log in one step', () => {
  it('gives exactly the state that applying the events one by one gives, every record frozen', async () => {
    const events = await history()
    expect(events.length).toBeGreaterThan(70)
    const oneByOne = events.reduce(applyEvent, emptyState())
    const batched = applyEvents(emptyState(), events, (_e, err) => err as Error)
    expect(plain(batched)).toEqual(plain(oneByOne))
    expect(batched.rev).toBe(events.at(-1)!.rev)
    for (const a of shardValues(batched.annotations)) {
      expect(Object.isFrozen(a)).toBe(true)
      for (const r of a.replies) expect(Object.isFrozen(r)).toBe(true)
    }
    for (const s of shardValues(batched.sessions)) expect(Object.isFrozen(s)).toBe(true)
  })

  it('continues from a state built by an earlier replay, leaving that state untouched', async () => {
    const events = await history()
    const half = Math.floor(events.length / 2)
    const first = applyEvents(emptyState(), events.slice(0, half), (_e, err) => err as Error)
    const before = JSON.stringify(plain(first))
    const all = applyEvents(first, events.slice(half), (_e, err) => err as Error)
    expect(JSON.stringify(plain(first))).toBe(before)
    expect(plain(all)).toEqual(plain(events.reduce(applyEvent, emptyState())))
  })

  it('names the event that does not fit, and returns nothing half-applied', async () => {
    const events = await history()
    const bad: StoreEvent = { ...events.find((e) => e.type === 'annotation.replied')!, annotationId: 'ann_missing', rev: events.at(-1)!.rev + 1 } as StoreEvent
    const start = emptyState()
    expect(() => applyEvents(start, [...events, bad], (e, err) => new Error(`rev ${e.rev} (${e.type}): ${String(err)}`))).toThrow(
      new RegExp(`^rev ${bad.rev} \\(annotation.replied\\)`),
    )
    expect(start.rev).toBe(0)
  })
})
