/** Work a stdio server does once the client has asked what it came for, not before. */
import type { Transport } from '@modelcontextprotocol/server'
import { wrapTransport } from './transport.js'

/** Requests of the handshake: a client sends them before the ones it came for. */
const HANDSHAKE = new Set(['initialize', 'server/discover', 'ping'])

/**
 * `transport`, calling `then` once: on the client's first request past the handshake (tools/list,
 * tools/call, …), after the answers that need no waiting have gone out (setImmediate runs once
 * the messages read at once have been handled). A client that starts a server writes its first
 * requests at once; what `then` does (a git process, an HTTP request) delays none of those
 * answers, and does not wait for a long call (a watch) to end either.
 */
export function afterFirstRequest(transport: Transport, then: () => void): Transport {
  let done = false
  return wrapTransport(transport, {
    onmessage: (handler) => (message, extra) => {
      if (!done && 'method' in message && 'id' in message && !HANDSHAKE.has(message.method)) {
        done = true
        setImmediate(then)
      }
      handler(message, extra)
    },
  })
}
