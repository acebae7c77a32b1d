/** Work a stdio server does once it has answered its first real request, not before. */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'

/** Requests of the handshake: a client sends them before the ones it came for. */
const HANDSHAKE = new Set(['initialize', 'server/discover', 'ping'])

/**
 * `transport`, calling `then` once: when the answer to the client's first request past the
 * handshake (tools/list, tools/call, …) has been sent. A client that starts a server writes its
 * first requests at once; what `then` does (a git process, an HTTP request) then delays no answer
 * it waits for.
 */
export function afterFirstAnswer(transport: Transport, then: () => void): Transport {
  const awaited = new Set<string | number>()
  let done = false
  const idOf = (message: JSONRPCMessage): string | number | undefined => ('id' in message && message.id !== null ? message.id : undefined)
  return {
    start: () => transport.start(),
    async send(message, options) {
      await transport.send(message, options)
      const id = idOf(message)
      if (done || 'method' in message || id === undefined || !awaited.has(id)) return
      done = true
      then()
    },
    close: () => transport.close(),
    get onmessage() {
      return transport.onmessage
    },
    set onmessage(handler) {
      transport.onmessage =
        handler &&
        ((message, extra) => {
          const id = idOf(message)
          if (!done && 'method' in message && id !== undefined && !HANDSHAKE.has(message.method)) awaited.add(id)
          handler(message, extra)
        })
    },
    get onerror() {
      return transport.onerror
    },
    set onerror(handler) {
      transport.onerror = handler
    },
    get onclose() {
      return transport.onclose
    },
    set onclose(handler) {
      transport.onclose = handler
    },
  }
}
