/**
 * The stdio server's page reads answered beside the SDK (answeringPageReads): only plain list-tool
 * calls on an initialized 2025 session of a client that renders no apps, only while the SDK owes
 * no answer, with the answer the SDK path gives; everything else reaches the SDK's handler.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'
import { EXTENSION_ID } from '@modelcontextprotocol/ext-apps/server'
import { describe, expect, it } from 'vitest'
import { answeringPageReads, type PageSource } from '../../../src/cli/page-reads.js'
import type { CallOutcome, ToolService } from '../../../src/tools/registry.js'

/** The transport below (the SDK's stdio transport stands here): records what is sent through it. */
function fakeTransport(): Transport & { sent: JSONRPCMessage[] } {
  const t = {
    sent: [] as JSONRPCMessage[],
    onmessage: undefined as Transport['onmessage'],
    start: async () => {},
    send: async (m: JSONRPCMessage) => void t.sent.push(m),
    close: async () => {},
  }
  return t
}

const PAGE: CallOutcome = { ok: true, result: { annotations: [], count: 0, total: 0, rev: 3 }, text: 'No pending annotations (rev 3).' }

function setUp(outcome: CallOutcome | Error = PAGE) {
  const inner = fakeTransport()
  const calls: { name: string; args: unknown }[] = []
  const service: ToolService = {
    list: () => [],
    serverInfo: () => {
      throw new Error('not used')
    },
    call: async (name, args) => {
      calls.push({ name, args })
      if (outcome instanceof Error) throw outcome
      return outcome
    },
  }
  const transport = answeringPageReads(inner, service)
  const handed: JSONRPCMessage[] = []
  transport.onmessage = (message) => void handed.push(message) // the SDK's handler
  const receive = (message: JSONRPCMessage) => inner.onmessage!(message)
  /** Lets the answers written beside the SDK reach the transport below. */
  const settled = () => new Promise((resolve) => setImmediate(resolve))
  /** The handshake, answered by "the SDK" with `protocolVersion`. */
  const initialize = async (protocolVersion = '2025-11-25', capabilities: Record<string, unknown> = {}) => {
    receive({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities, clientInfo: { name: 't', version: '1' } } })
    await transport.send({ jsonrpc: '2.0', id: 0, result: { protocolVersion, capabilities: {}, serverInfo: { name: 'marginalia', version: '0' } } })
    receive({ jsonrpc: '2.0', method: 'notifications/initialized' })
  }
  return { inner, transport, calls, handed, receive, settled, initialize }
}

const pageCall = (id: number, params: Record<string, unknown> = { name: 'get_all_pending', arguments: { limit: 5 } }): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params })

describe('answeringPageReads', () => {
  it('answers a list tool call itself once a 2025 session is initialized, as the SDK path would', async () => {
    const t = setUp()
    await t.initialize()
    t.receive(pageCall(1))
    await t.settled()
    expect(t.calls).toEqual([{ name: 'get_all_pending', args: { limit: 5 } }])
    expect(t.handed.map((m) => ('method' in m ? m.method : m))).toEqual(['initialize', 'notifications/initialized'])
    const answer = t.inner.sent.at(-1)!
    expect(answer).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: PAGE.ok ? PAGE.text : '' }], structuredContent: PAGE.ok ? PAGE.result : {} } })
    // Key for key in the SDK's order: the stdio line is byte for byte the one the SDK path writes.
    expect(Object.keys(answer)).toEqual(['result', 'jsonrpc', 'id'])

    t.receive(pageCall(2, { name: 'get_session', arguments: { id: 's_1' } }))
    t.receive(pageCall(3, { name: 'get_pending' })) // no arguments: {}
    await t.settled()
    expect(t.calls.slice(1)).toEqual([
      { name: 'get_session', args: { id: 's_1' } },
      { name: 'get_pending', args: {} },
    ])
  })

  it('answers a failed call as the SDK path does: isError, the code and message, the error in _meta', async () => {
    const t = setUp({ ok: false, error: { code: 'INVALID_PARAMS', message: 'limit: must be at most 500' } })
    await t.initialize()
    t.receive(pageCall(1))
    await t.settled()
    expect(t.inner.sent.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { isError: true, content: [{ type: 'text', text: 'INVALID_PARAMS: limit: must be at most 500' }], _meta: { 'marginalia/error': { code: 'INVALID_PARAMS', message: 'limit: must be at most 500' } } },
    })
  })

  it('answers a call whose service throws with an internal error, as the SDK answers a throwing handler, and goes on answering', async () => {
    const t = setUp(new Error('store closed'))
    const errors: Error[] = []
    t.transport.onerror = (e) => void errors.push(e)
    await t.initialize()
    t.receive(pageCall(1))
    await t.settled()
    expect(t.inner.sent.at(-1)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'store closed' } })
    t.receive(pageCall(2))
    await t.settled()
    expect(t.inner.sent.at(-1)).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'store closed' } })
    expect(errors).toEqual([])
  })

  it('hands the SDK every call before the session is initialized, and other tools, methods and call shapes', async () => {
    const t = setUp()
    t.receive(pageCall(1)) // before initialize
    await t.initialize()
    const others: JSONRPCMessage[] = [
      pageCall(2, { name: 'watch_annotations', arguments: {} }),
      pageCall(3, { name: 'get_all_pending', arguments: {}, _meta: { progressToken: 7 } }),
      pageCall(4, { name: 'get_all_pending', arguments: {}, task: { ttl: 1000 } }),
      pageCall(5, { name: 'get_all_pending', arguments: 'not an object' }),
      { jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'marginalia://pending' } },
    ]
    for (const m of others) {
      t.receive(m)
      await t.transport.send({ jsonrpc: '2.0', id: (m as { id: number }).id, result: {} }) // the SDK answers each
    }
    await t.settled()
    expect(t.calls).toEqual([])
    expect(t.handed.filter((m) => 'id' in m).map((m) => (m as { id: number }).id)).toEqual([1, 0, 2, 3, 4, 5, 6])
  })

  it('hands the SDK page reads while it owes an answer, until it answers or the request is cancelled', async () => {
    const t = setUp()
    await t.initialize()
    t.receive(pageCall(1, { name: 'watch_annotations', arguments: {} })) // a wait the SDK runs
    t.receive(pageCall(2))
    expect(t.handed.filter((m) => 'id' in m && m.id !== 0).map((m) => (m as { id: number }).id)).toEqual([1, 2])
    await t.transport.send({ jsonrpc: '2.0', id: 2, result: {} })
    t.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) // never answered
    t.receive(pageCall(3))
    await t.settled()
    expect(t.calls).toEqual([{ name: 'get_all_pending', args: { limit: 5 } }])
    expect(t.handed.some((m) => 'id' in m && m.id === 3)).toBe(false)
  })

  it('leaves a 2026-07-28 connection and a client that renders MCP Apps to the SDK', async () => {
    const modern = setUp()
    await modern.initialize('2026-07-28')
    modern.receive(pageCall(1))
    const apps = setUp()
    await apps.initialize('2025-11-25', { extensions: { [EXTENSION_ID]: {} } })
    apps.receive(pageCall(1))
    await modern.settled()
    expect([...modern.calls, ...apps.calls]).toEqual([])
    expect(modern.handed.some((m) => 'id' in m && m.id === 1)).toBe(true)
    expect(apps.handed.some((m) => 'id' in m && m.id === 1)).toBe(true)
  })
})

describe('answeringPageReads: the next page of a walk, read ahead', () => {
  /**
   * A list of `size` items in pages of 2, read from a store whose state is `state.now` (a new
   * object after each write, as the store's); each page says which state it was read from.
   */
  function walkSetUp(size = 7) {
    const inner = fakeTransport()
    const calls: Record<string, unknown>[] = []
    const store = { now: { writes: 0 }, news: undefined as undefined | (() => void), catchUps: 0, failing: new Set<string>() }
    const source: PageSource = {
      catchUp: () => {
        store.catchUps++
        const news = store.news
        store.news = undefined
        return news ? Promise.resolve().then(news) : undefined
      },
      getState: () => store.now,
    }
    const service: ToolService = {
      list: () => [],
      serverInfo: () => {
        throw new Error('not used')
      },
      call: async (name, raw) => {
        const args = raw as { cursor?: string; limit?: number }
        calls.push({ ...args })
        const catchingUp = source.catchUp()
        if (catchingUp) await catchingUp
        // A cursor set to fail answers once with a failure (a read-ahead the store refused).
        if (args.cursor !== undefined && store.failing.delete(args.cursor)) return { ok: false, error: { code: 'INTERNAL_ERROR', message: 'the store refused' } }
        const from = Number(args.cursor ?? 0)
        const limit = args.limit ?? 2
        const items = Array.from({ length: Math.max(0, Math.min(limit, size - from)) }, (_, i) => `item ${from + i}`)
        const next = from + limit < size ? { nextCursor: String(from + limit) } : {}
        const result = { annotations: items, writes: store.now.writes, ...next }
        return { ok: true, result, text: `${name}: ${items.join(', ')} (writes ${store.now.writes})` }
      },
    }
    const transport = answeringPageReads(inner, service, source)
    transport.onmessage = () => {}
    const receive = (message: JSONRPCMessage) => inner.onmessage!(message)
    const settled = () => new Promise((resolve) => setImmediate(resolve))
    let id = 10
    /** A page read answered; its result as sent. */
    const read = async (args: Record<string, unknown>) => {
      const sent = inner.sent.length
      receive(pageCall(++id, { name: 'get_all_pending', arguments: args }))
      await settled()
      expect(inner.sent.length).toBe(sent + 1)
      return (inner.sent.at(-1) as unknown as { result: { structuredContent: { annotations: string[]; writes: number; nextCursor?: string } } }).result
    }
    /** A write by another process: the store moves to a new state when it catches up. */
    const writeElsewhere = () => {
      store.news = () => void (store.now = { writes: store.now.writes + 1 })
    }
    const initialize = async () => {
      receive({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
      await transport.send({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'marginalia', version: '0' } } })
    }
    return { inner, calls, store, read, writeElsewhere, initialize }
  }

  it('reads the next page once a page with a cursor is written, and answers the request for it with that page, byte for byte', async () => {
    const t = walkSetUp()
    await t.initialize()
    const first = await t.read({})
    expect(first.structuredContent).toEqual({ annotations: ['item 0', 'item 1'], writes: 0, nextCursor: '2' })
    // Page one was read, then page two ahead of its request.
    expect(t.calls).toEqual([{}, { cursor: '2' }])
    const pages = [first]
    for (let cursor = first.structuredContent.nextCursor; cursor !== undefined; cursor = pages.at(-1)!.structuredContent.nextCursor) pages.push(await t.read({ cursor }))
    expect(pages.flatMap((p) => p.structuredContent.annotations)).toEqual(['item 0', 'item 1', 'item 2', 'item 3', 'item 4', 'item 5', 'item 6'])
    // Each page read once: pages two to four were read ahead, and nothing after the last.
    expect(t.calls).toEqual([{}, { cursor: '2' }, { cursor: '4' }, { cursor: '6' }])
    // The store was caught up before each page read ahead was handed over, as before a read.
    expect(t.store.catchUps).toBe(4 + 3)
    // What was sent is what a read at that moment sends: the same line.
    const fresh = walkSetUp()
    await fresh.initialize()
    const again = await fresh.read({ cursor: '4' })
    expect(JSON.stringify(pages[2])).toBe(JSON.stringify(again))
  })

  it('reads the page again when another process wrote since it was read ahead (caught up first)', async () => {
    const t = walkSetUp()
    await t.initialize()
    await t.read({})
    t.writeElsewhere()
    const second = await t.read({ cursor: '2' })
    // Read again after catching up: the page shows the write.
    expect(second.structuredContent.writes).toBe(1)
    expect(t.calls).toEqual([{}, { cursor: '2' }, { cursor: '2' }, { cursor: '4' }])
    // The walk goes on from the new state, ahead again.
    expect((await t.read({ cursor: '4' })).structuredContent.writes).toBe(1)
    expect(t.calls).toHaveLength(5)
  })

  it('reads the page when the request is not for the page read ahead: other arguments, another cursor', async () => {
    const t = walkSetUp()
    await t.initialize()
    await t.read({})
    expect((await t.read({ cursor: '2', limit: 3 })).structuredContent.annotations).toEqual(['item 2', 'item 3', 'item 4'])
    expect((await t.read({ cursor: '4' })).structuredContent.annotations).toEqual(['item 4', 'item 5'])
    expect(t.calls).toEqual([{}, { cursor: '2' }, { cursor: '2', limit: 3 }, { cursor: '5', limit: 3 }, { cursor: '4' }, { cursor: '6' }])
  })

  it('reads nothing ahead of a last page or without the store to check against, and keeps no failed read ahead', async () => {
    const last = walkSetUp(2)
    await last.initialize()
    await last.read({})
    expect(last.calls).toEqual([{}])

    // A read ahead that failed is not kept: the request reads the page itself.
    const failing = walkSetUp()
    await failing.initialize()
    failing.store.failing.add('2')
    await failing.read({})
    expect((await failing.read({ cursor: '2' })).structuredContent.annotations).toEqual(['item 2', 'item 3'])
    expect(failing.calls).toEqual([{}, { cursor: '2' }, { cursor: '2' }, { cursor: '4' }])

    const unchecked = setUp({ ok: true, result: { annotations: [], count: 0, total: 9, rev: 3, nextCursor: 'c' }, text: 'More' })
    await unchecked.initialize()
    unchecked.receive(pageCall(1))
    await unchecked.settled()
    expect(unchecked.calls).toHaveLength(1)
  })
})
