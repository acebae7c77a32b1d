/** Transports of the stdio server, with behaviour added around the handlers the SDK installs. */
import type { Transport } from '@modelcontextprotocol/server'

type MessageHandler = NonNullable<Transport['onmessage']>
type CloseHandler = NonNullable<Transport['onclose']>

export interface TransportHooks {
  /** Wraps the message handler the SDK installs. */
  onmessage?: (handler: MessageHandler) => MessageHandler
  /** Wraps the close handler the SDK installs (also when it installs none). */
  onclose?: (handler: CloseHandler | undefined) => CloseHandler
}

/** `transport` with its handlers wrapped by `hooks` as they are set; everything else passed through. */
export function wrapTransport(transport: Transport, hooks: TransportHooks): Transport {
  return {
    start: () => transport.start(),
    send: (message, options) => transport.send(message, options),
    close: () => transport.close(),
    get onmessage() {
      return transport.onmessage
    },
    set onmessage(handler) {
      transport.onmessage = handler && hooks.onmessage ? hooks.onmessage(handler) : handler
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
      transport.onclose = hooks.onclose ? hooks.onclose(handler) : handler
    },
  }
}
