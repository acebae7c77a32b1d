/**
 * The page's end of the extension's private channel: a `Transport` (what the overlay's Api and
 * live stream use instead of `fetch`) whose requests the extension's service worker makes, the
 * answer streamed back into a real `Response`; and one-off questions (a screenshot, "Sign in").
 */
import type { Transport } from '../shared/api.js'
import type { FetchReply } from './messages.js'
import { operationOf } from './operations.js'

/**
 * The page's own builtins as they were before its first script ran (this module runs at
 * document_start): a script of the page that replaces `MessagePort.prototype.postMessage` or
 * `Response` later cannot see or change what passes over the channel.
 */
const Channel = MessageChannel
const Resp = Response
const Stream = ReadableStream
const Encoder = TextEncoder
const apply = Reflect.apply
const post = MessagePort.prototype.postMessage as (message: unknown, transfer: Transferable[]) => void
const close = MessagePort.prototype.close
const setOnMessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage')!.set!

/** Hear what comes over a port. */
export function listen(port: MessagePort, handler: (e: MessageEvent) => void): void {
  apply(setOnMessage, port, [handler])
}

function send(port: MessagePort, message: unknown, transfer: Transferable[] = []): void {
  apply(post, port, [message, transfer])
}

/** A question over the channel and its one answer. */
export function ask<T>(port: MessagePort, message: object): Promise<T> {
  return new Promise((resolve) => {
    const { port1, port2 } = new Channel()
    listen(port1, (e) => {
      apply(close, port1, [])
      resolve(e.data as T)
    })
    send(port, message, [port2])
  })
}

const NO_BODY = new Set([101, 204, 205, 304])

/**
 * The overlay's requests as operations of the extension (operations.ts): a request that is none
 * fails here, and whatever the page makes of this code, the service worker checks each one.
 */
export function bridgeTransport(port: MessagePort, server: string): Transport {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal
      if (signal?.aborted) return reject(new DOMException('The request was aborted.', 'AbortError'))
      const operation = operationOf(url, init.method ?? 'GET', server)
      if (!operation) return reject(new TypeError(`The extension carries only the overlay's own requests, not ${init.method ?? 'GET'} ${url}.`))
      const { port1, port2 } = new Channel()
      const encoder = new Encoder()
      let stream: ReadableStreamDefaultController<Uint8Array> | undefined
      let answered = false
      const finish = (): void => {
        apply(close, port1, [])
        signal?.removeEventListener('abort', onAbort)
      }
      const fail = (error: Error): void => {
        if (!answered) reject(error)
        else {
          try {
            stream?.error(error)
          } catch {
            // already closed
          }
        }
        answered = true
        finish()
      }
      const onAbort = (): void => {
        send(port1, { abort: true })
        fail(new DOMException('The request was aborted.', 'AbortError'))
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      listen(port1, (e: MessageEvent) => {
        const m = e.data as FetchReply
        if ('status' in m) {
          answered = true
          const body = NO_BODY.has(m.status)
            ? null
            : new Stream<Uint8Array>({
                start(controller) {
                  stream = controller
                },
              })
          resolve(new Resp(body, { status: m.status, statusText: m.statusText, headers: m.contentType ? { 'Content-Type': m.contentType } : {} }))
        } else if ('chunk' in m) {
          stream?.enqueue(encoder.encode(m.chunk))
        } else if ('end' in m) {
          try {
            stream?.close()
          } catch {
            // already closed
          }
          finish()
        } else {
          fail(new TypeError(m.error))
        }
      })
      const body = init.body
      send(port, { type: 'op', operation: { ...operation, ...(typeof body === 'string' ? { body } : body instanceof Blob ? { blob: body } : {}) } }, [port2])
    })
}
