import { describe, expect, it } from 'vitest'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { BoundedEventStore } from '../../../src/http/event-store.js'

const msg = (n: number, pad = 0): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `m${n}${'x'.repeat(pad)}` } })

describe('BoundedEventStore (resumable MCP streams)', () => {
  it('replays exactly the events of the same stream after the last id, in order', async () => {
    const store = new BoundedEventStore()
    const a1 = await store.storeEvent('a', msg(1))
    await store.storeEvent('b', msg(2))
    await store.storeEvent('a', msg(3))
    await store.storeEvent('a', msg(4))
    const sent: string[] = []
    const stream = await store.replayEventsAfter(a1, { send: async (_id, m) => void sent.push((m as unknown as { params: { data: string } }).params.data) })
    expect(stream).toBe('a')
    expect(sent).toEqual(['m3', 'm4'])
    expect(await store.getStreamIdForEventId(a1)).toBe('a')
  })

  it('keeps memory bounded: the oldest events go first', async () => {
    const store = new BoundedEventStore(10_000)
    const first = await store.storeEvent('a', msg(0, 3_000))
    for (let i = 1; i < 20; i++) await store.storeEvent('a', msg(i, 3_000))
    expect(store.size).toBeLessThanOrEqual(10_000)
    const sent: string[] = []
    await store.replayEventsAfter(first, { send: async (_id, m) => void sent.push((m as unknown as { params: { data: string } }).params.data.slice(0, 3)) })
    expect(sent.length).toBeLessThan(19)
    expect(sent.at(-1)).toBe('m19')
  })

  it('an id it never issued is refused', async () => {
    await expect(new BoundedEventStore().replayEventsAfter('garbage', { send: async () => {} })).rejects.toThrow(/not one this server sent/)
  })
})
