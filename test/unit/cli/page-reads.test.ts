/**
 * The stdio server's page reads answered beside the SDK (answeringPageReads): only plain list-tool
 * calls on an initialized 2025 session of a client that renders no apps, only while the SDK owes
 * no answer, with the answer the SDK path gives; everything else reaches the SDK's handler.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'
import { EXTENSION_ID } from '@modelcontextprotocol/ext-apps/server'
import { describe, expect, it } from 'vitest'
import { answeringPageReads } from '../../../src/cli/page-reads.js'
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
