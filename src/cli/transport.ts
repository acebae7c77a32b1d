/** Transports of the stdio server, with behaviour added around the handlers the SDK installs. */
import type { Transport } from '@modelcontextprotocol/server'
import { toJson } from '../views/json.js'

type MessageHandler = NonNullable<Transport['onmessage']>
type CloseHandler = NonNullable<Transport['onclose']>

export interface TransportHooks {
  /** Wraps the message handler the SDK installs. */
  onmessage?: (handler: MessageHandler) => MessageHandler
  /** Wraps the close handler the SDK installs (also when it installs none). */
  onclose?: (handler: CloseHandler | undefined) => CloseHandler
  /** Sends instead of the transport's own send. */
  send?: Transport['send']
  /** Runs before the transport closes. */
  beforeClose?: () => void
}

/** `transport` with its handlers wrapped by `hooks` as they are set; everything else passed through. */
export function wrapTransport(transport: Transport, hooks: TransportHooks): Transport {
  return {
    start: () => transport.start(),
    send: hooks.send ?? ((message, options) => transport.send(message, options)),
    close: () => {
      hooks.beforeClose?.()
      return transport.close()
    },
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

/**
 * The SDK's stdio server transport, writing each message itself: the line the SDK would write
 * (`JSON.stringify(message)` and a newline, resolved once `stdout` took it or drained, rejected on
 * its error or once closed), serialised by `toJson`, which reuses the JSON a page's summaries
 * keep instead of stringifying every summary again for every page.
 */
export function writingKeptJson(transport: Transport, stdout: NodeJS.WritableStream = process.stdout): Transport {
  let closed = false
  return wrapTransport(transport, {
    onclose: (handler) => () => {
      closed = true
      handler?.()
    },
    beforeClose: () => {
      closed = true
    },
    send: (message) => (closed ? Promise.reject(new Error('StdioServerTransport is closed')) : writeLine(stdout, `${toJson(message)}\n`)),
  })
}

function writeLine(stdout: NodeJS.WritableStream, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false
    const settle = (error?: unknown) => {
      if (settled) return
      settled = true
      stdout.off('error', onError)
      stdout.off('drain', onDrain)
      if (error === undefined) resolve()
      else reject(error instanceof Error ? error : new Error(String(error)))
    }
    const onError = (error: unknown) => settle(error ?? new Error('stdout error'))
    const onDrain = () => settle()
    stdout.once('error', onError)
    if (stdout.write(line)) settle()
    else if (!settled) stdout.once('drain', onDrain)
  })
}
