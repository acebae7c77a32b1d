/**
 * The stdio server's transport writes each message itself (writingKeptJson): the same line the
 * SDK writes, resolved once stdout took it or drained, refused once the transport closed, and
 * failed with stdout's error.
 */
import { PassThrough } from 'node:stream'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { writingKeptJson } from '../../../src/cli/transport.js'

/** A transport that only records what reaches it (the SDK's stdio transport stands here). */
function fakeTransport(): Transport & { sent: JSONRPCMessage[]; closed: boolean } {
  const t = {
    sent: [] as JSONRPCMessage[],
    closed: false,
    onclose: undefined as (() => void) | undefined,
    start: async () => {},
    send: async (m: JSONRPCMessage) => void t.sent.push(m),
    close: async () => {
      t.closed = true
      t.onclose?.()
    },
  }
  return t
}

const message: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'say "hi"\n' }], structuredContent: { n: 1 } } }

describe('writingKeptJson', () => {
  it('writes JSON.stringify(message) and a newline to stdout, not through the wrapped send', async () => {
    const inner = fakeTransport()
    const stdout = new PassThrough()
    const chunks: Buffer[] = []
    stdout.on('data', (c: Buffer) => chunks.push(c))
    const transport = writingKeptJson(inner, stdout)
    await transport.send(message)
    expect(Buffer.concat(chunks).toString('utf8')).toBe(`${JSON.stringify(message)}\n`)
    expect(inner.sent).toEqual([])
  })

  it('resolves a write stdout could not take at once when it drains', async () => {
    const stdout = new PassThrough({ highWaterMark: 16 })
    const transport = writingKeptJson(fakeTransport(), stdout)
    let done = false
    const sending = transport.send(message).then(() => (done = true))
    await Promise.resolve()
    expect(done).toBe(false) // nobody has read yet: the write is buffered past the mark
    stdout.resume() // reading drains it
    await sending
    expect(done).toBe(true)
  })

  it('refuses to send once the transport closed, by its close or by the wrapped one closing', async () => {
    const closedByUs = writingKeptJson(fakeTransport(), new PassThrough())
    await closedByUs.close()
    await expect(closedByUs.send(message)).rejects.toThrow(/closed/)

    const inner = fakeTransport()
    const closedUnder = writingKeptJson(inner, new PassThrough())
    let heard = false
    closedUnder.onclose = () => (heard = true) // the SDK installs its close handler
    await inner.close() // stdin ended: the SDK's transport closes itself
    expect(heard).toBe(true)
    await expect(closedUnder.send(message)).rejects.toThrow(/closed/)
  })

  it("fails a write with stdout's error", async () => {
    const stdout = new PassThrough({ highWaterMark: 16 })
    const transport = writingKeptJson(fakeTransport(), stdout)
    const sending = transport.send(message)
    stdout.destroy(new Error('EPIPE: the client went away'))
    await expect(sending).rejects.toThrow(/EPIPE/)
  })
})
