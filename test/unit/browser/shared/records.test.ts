/**
 * ClientAnnotations, the records the overlay and the inbox hold: live events and responses to
 * the person's own actions arrive in either order, and a reply is never shown twice or lost.
 * Events and responses come from a real store; copies go through JSON as they do over the wire.
 */
import { describe, expect, it } from 'vitest'
import type { Annotation, StoreEvent } from '../../../../src/index.js'
import { ClientAnnotations } from '../../../../src/browser/shared/records.js'
import { memoryStore } from '../../../helpers/store.js'

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

async function setup() {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const events: StoreEvent[] = []
  store.changes$.subscribe((e) => events.push(wire(e)))
  const a = await store.addAnnotation({ sessionId: session.id, comment: 'The header is cut off' })
  const records = new ClientAnnotations()
  records.reset([wire(store.getAnnotation(a.id))])
  events.length = 0
  return { store, session, events, records, a }
}

const messages = (a: Annotation | undefined) => a?.replies.map((r) => r.message)

describe('ClientAnnotations', () => {
  it('the person replies: the live event arrives before the response, the reply shows once', async () => {
    const { store, events, records, a } = await setup()
    const response = wire(await store.reply(a.id, { author: 'human', message: 'On Safari only' }))
    expect(records.apply(events[0]!)).toBe('applied')
    expect(records.offer(response)).toBe(false) // as new as what the event made: nothing to take
    expect(messages(records.get(a.id))).toEqual(['On Safari only'])
    expect(records.get(a.id)).toEqual(store.getAnnotation(a.id))
  })

  it('the person replies: the response arrives before the live event, the reply shows once', async () => {
    const { store, events, records, a } = await setup()
    const response = wire(await store.reply(a.id, { author: 'human', message: 'On Safari only' }))
    expect(records.offer(response)).toBe(true)
    expect(records.apply(events[0]!)).toBe('stale')
    expect(messages(records.get(a.id))).toEqual(['On Safari only'])
    expect(records.get(a.id)).toEqual(store.getAnnotation(a.id))
  })

  it('a response that was overtaken by later events does not take back what they brought', async () => {
    const { store, events, records, a } = await setup()
    const response = wire(await store.reply(a.id, { author: 'human', message: 'Still cut off' }))
    await store.acknowledge(a.id, { message: 'Looking' })
    await store.reply(a.id, { author: 'agent', message: 'Fixed the overflow', kind: 'message' })
    for (const e of events) records.apply(e)
    expect(records.offer(response)).toBe(false)
    expect(messages(records.get(a.id))).toEqual(['Still cut off', 'Looking', 'Fixed the overflow'])
    expect(records.get(a.id)).toEqual(store.getAnnotation(a.id))
  })

  it('an annotation fetched after a `missing` event is not changed again by the events it already reflects', async () => {
    const { store, events, a } = await setup()
    await store.acknowledge(a.id, { message: 'On it' })
    await store.reply(a.id, { author: 'agent', message: 'Which breakpoint?', kind: 'question' })
    const records = new ClientAnnotations()
    expect(records.apply(events[0]!)).toBe('missing')
    expect(records.offer(wire(store.getAnnotation(a.id)))).toBe(true)
    expect(records.apply(events[1]!)).toBe('stale')
    expect(messages(records.get(a.id))).toEqual(['On it', 'Which breakpoint?'])
  })

  it('the annotation the sender stored is not replaced or doubled by its own `created` event', async () => {
    const { store, session, events, records } = await setup()
    const sent = wire(await store.addAnnotation({ sessionId: session.id, comment: 'Logo too small' }))
    expect(records.offer(sent)).toBe(true)
    const held = records.get(sent.id)
    expect(records.apply(events[0]!)).toBe('stale')
    expect(records.get(sent.id)).toBe(held)
    expect(records.size).toBe(2)
  })

  it('keeps arrival order (the inbox lists them so), also when a later page repeats one it holds', async () => {
    const { store, session, events, records, a } = await setup()
    const b = wire(await store.addAnnotation({ sessionId: session.id, comment: 'second' }))
    records.apply(events[0]!)
    const older = wire(store.getAnnotation(a.id))
    await store.acknowledge(a.id)
    records.apply(events[1]!)
    expect(records.offer(older)).toBe(false)
    expect(records.all().map((x) => x.id)).toEqual([a.id, b.id])
    expect(records.get(a.id)?.status).toBe('acknowledged')
    expect(records.delete(b.id)).toBe(true)
    expect(records.all().map((x) => x.id)).toEqual([a.id])
  })
})
