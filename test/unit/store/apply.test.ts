import { describe, expect, it } from 'vitest'
import { applyAnnotationEvent, type AnnotationRecords } from '../../../src/store/apply.js'
import { type Annotation, type Store, type StoreEvent } from '../../../src/index.js'
import { TRANSITIONS, allowedFrom, type StatusAction } from '../../../src/store/machine.js'
import { memoryStore } from '../../helpers/store.js'

/** A browser-side copy of records: a plain Map of mutable JSON copies, as the overlay keeps. */
function browserRecords(annotations: Annotation[]): Map<string, Annotation> & AnnotationRecords {
  return new Map(annotations.map((a) => [a.id, structuredClone(a) as Annotation]))
}

const STATUS_ACTIONS = (Object.keys(TRANSITIONS) as (keyof typeof TRANSITIONS)[]).filter((a): a is StatusAction => TRANSITIONS[a].to !== null)

/** Bring a fresh annotation to `status` through the store's own commands. */
async function annotationIn(store: Store, sessionId: string, status: Annotation['status']): Promise<Annotation> {
  const a = await store.addAnnotation({ sessionId, comment: `start ${status}` })
  if (status === 'acknowledged') return store.acknowledge(a.id)
  if (status === 'resolved') return store.resolve(a.id, { summary: 'done' })
  if (status === 'dismissed') return store.dismiss(a.id, { reason: 'no' })
  return a
}

async function act(store: Store, action: StatusAction, id: string): Promise<Annotation> {
  switch (action) {
    case 'acknowledge':
      return store.acknowledge(id, { message: 'on it' })
    case 'resolve':
      return store.resolve(id, { summary: 'fixed' })
    case 'dismiss':
      return store.dismiss(id, { reason: 'by design' })
    case 'reopen':
      return store.reopen(id, { message: 'still broken' })
  }
}

describe('applyAnnotationEvent: the browser applies events exactly as the store does', () => {
  for (const action of STATUS_ACTIONS) {
    for (const from of allowedFrom(action)) {
      it(`${action} from ${from}`, async () => {
        const store = memoryStore()
        const session = await store.createSession({ url: 'http://localhost:5173/' })
        const before = await annotationIn(store, session.id, from)
        const copy = browserRecords([before])
        const events: StoreEvent[] = []
        const sub = store.changes$.subscribe((e) => events.push(e))
        const after = await act(store, action, before.id)
        sub.unsubscribe()
        expect(events).toHaveLength(1)
        expect(applyAnnotationEvent(copy, events[0]!)).toBe('applied')
        expect(copy.get(before.id)).toEqual(after)
      })
    }
  }

  it('replies, creation and deletion, applied in order, give the store state', async () => {
    const store = memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const copy = browserRecords([])
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'one' })
    const b = await store.addAnnotation({ sessionId: session.id, comment: 'two' })
    await store.reply(a.id, { author: 'agent', message: 'which one?', kind: 'question' })
    await store.reply(a.id, { author: 'human', message: 'the blue one' })
    await store.dismiss(a.id, { reason: 'duplicate' })
    await store.deleteAnnotation(b.id)
    for (const e of events) applyAnnotationEvent(copy, e)
    expect([...copy.values()]).toEqual(store.listAnnotations())
    expect(copy.get(a.id)?.resolvedAt).toBeUndefined()
  })

  it('says when it cannot apply: an annotation not held, a record already at that rev, a session event', async () => {
    const store = memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'one' })
    await store.acknowledge(a.id)
    const [created, acknowledged] = events as [StoreEvent, StoreEvent]
    expect(applyAnnotationEvent(browserRecords([]), acknowledged)).toBe('missing')
    const fetchedLater = browserRecords([store.getAnnotation(a.id)])
    expect(applyAnnotationEvent(fetchedLater, acknowledged)).toBe('stale')
    expect(applyAnnotationEvent(fetchedLater, created)).toBe('stale')
    expect(fetchedLater.get(a.id)).toEqual(store.getAnnotation(a.id))
    const sessionEvent: StoreEvent = { type: 'session.created', rev: 1, at: session.createdAt, sessionId: session.id, session }
    expect(applyAnnotationEvent(fetchedLater, sessionEvent)).toBe('ignored')
  })
})
