/**
 * A reply through the agent's host is the agent's: the store refuses one claimed as the person's
 * (the command, and a log line read back), and logs written before `via` existed read as before.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/index.js'
import { isStoreEvent } from '../../../src/store/events.js'

const reply = (fields: Record<string, unknown>) => ({
  type: 'annotation.replied',
  rev: 3,
  at: '2026-11-29T00:00:00.000Z',
  sessionId: 'ses_1',
  annotationId: 'ann_1',
  reply: { id: 'rep_1', message: 'Yes', createdAt: '2026-11-29T00:00:00.000Z', ...fields },
})

describe('replies through the host', () => {
  it('the command refuses via host as the person; as the agent it is kept with via', async () => {
    const store = createMemoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    await expect(store.reply(a.id, { author: 'human', via: 'host', message: 'Yes' })).rejects.toThrow(/never the person's/)
    await store.reply(a.id, { author: 'agent', via: 'host', message: 'Yes' })
    await expect(store.resolve(a.id, { summary: 'Done' }, 'human', { via: 'host' })).rejects.toThrow(/never the person's/)
    expect(store.getAnnotation(a.id).replies).toMatchObject([{ author: 'agent', via: 'host', message: 'Yes' }])
    await store.close()
  })

  it('a log line: an old reply (no via) reads; via host as the agent reads; via host as the person is refused', () => {
    expect(isStoreEvent(reply({ author: 'human' }))).toBe(true)
    expect(isStoreEvent(reply({ author: 'agent', via: 'host' }))).toBe(true)
    expect(isStoreEvent(reply({ author: 'human', via: 'host' }))).toBe(false)
    expect(isStoreEvent(reply({ author: 'agent', via: 'elsewhere' }))).toBe(false)
  })
})
