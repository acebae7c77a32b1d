import { describe, expect, it } from 'vitest'
import { InvalidTransitionError, type AnnotationStatus, type Store, type StoreEvent } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'

type Act = 'acknowledge' | 'resolve' | 'dismiss' | 'reopen' | 'reply'

// The status table of the docs (docs/guide/agents.md, docs/reference/events.md), written out cell by cell: null = refused.
const EXPECTED: Record<Act, Record<AnnotationStatus, AnnotationStatus | null>> = {
  acknowledge: { pending: 'acknowledged', acknowledged: null, resolved: null, dismissed: null },
  resolve: { pending: 'resolved', acknowledged: 'resolved', resolved: 'resolved', dismissed: 'resolved' },
  dismiss: { pending: 'dismissed', acknowledged: 'dismissed', resolved: 'dismissed', dismissed: 'dismissed' },
  reopen: { pending: null, acknowledged: 'pending', resolved: 'pending', dismissed: 'pending' },
  reply: { pending: 'pending', acknowledged: 'acknowledged', resolved: 'resolved', dismissed: 'dismissed' },
}

async function annotationIn(status: AnnotationStatus): Promise<{ store: Store; id: string }> {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const { id } = await store.addAnnotation({ sessionId: session.id, comment: 'The button overlaps the footer' })
  if (status === 'acknowledged') await store.acknowledge(id)
  if (status === 'resolved') await store.resolve(id)
  if (status === 'dismissed') await store.dismiss(id, { reason: 'works as designed' })
  expect(store.getAnnotation(id).status).toBe(status)
  return { store, id }
}

function act(store: Store, action: Act, id: string) {
  switch (action) {
    case 'acknowledge':
      return store.acknowledge(id)
    case 'resolve':
      return store.resolve(id)
    case 'dismiss':
      return store.dismiss(id, { reason: 'out of scope' })
    case 'reopen':
      return store.reopen(id)
    case 'reply':
      return store.reply(id, { author: 'agent', message: 'looking' })
  }
}

const cases = (Object.keys(EXPECTED) as Act[]).flatMap((action) =>
  (Object.keys(EXPECTED[action]) as AnnotationStatus[]).map((from) => ({ action, from, to: EXPECTED[action][from] })),
)

describe('the status table', () => {
  it.each(cases.filter((c) => c.to !== null))('$action from $from → $to', async ({ action, from, to }) => {
    const { store, id } = await annotationIn(from)
    const revBefore = store.rev
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const updated = await act(store, action, id)
    expect(updated.status).toBe(to)
    expect(store.getAnnotation(id).status).toBe(to)
    expect(store.rev).toBe(revBefore + 1)
    expect(events).toHaveLength(1)
    expect(events[0]!.rev).toBe(revBefore + 1)
    if (action === 'reply') expect(events[0]).toMatchObject({ type: 'annotation.replied', annotationId: id })
    else expect(events[0]).toMatchObject({ type: 'annotation.status_changed', action, from, to, annotationId: id })
  })

  it.each(cases.filter((c) => c.to === null))('$action from $from is refused and changes nothing', async ({ action, from }) => {
    const { store, id } = await annotationIn(from)
    const stateBefore = store.getState()
    const revBefore = store.rev
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const error = await act(store, action, id).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(InvalidTransitionError)
    expect(error).toMatchObject({ code: 'INVALID_TRANSITION', currentStatus: from, action })
    expect(store.getState()).toBe(stateBefore)
    expect(store.rev).toBe(revBefore)
    expect(events).toEqual([])
  })
})
