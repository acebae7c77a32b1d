/**
 * The page's end of the extension's private channel: a `Transport` (what the overlay's Api and
 * live stream use instead of `fetch`) whose requests the extension's service worker makes, the
 * answer streamed back into a real `Response`; and one-off questions (a screenshot, "Sign in").
 */
import type { Transport } from '../shared/api.js'
import type { FetchReply } from './messages.js'

/** A question over the channel and its one answer. */
export function ask<T>(port: MessagePort, message: object): Promise<T> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel()
    port1.onmessage = (e) => {
      port1.close()
      resolve(e.data as T)
    }
    port.postMessage(message, [port2])
  })
}

const NO_BODY = new Set([101, 204, 205, 304])

export function bridgeTransport(port: MessagePort): Transport {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal
      if (signal?.aborted) return reject(new DOMException('The request was aborted.', 'AbortError'))
      const { port1, port2 } = new MessageChannel()
      const encoder = new TextEncoder()
      let stream: ReadableStreamDefaultController<Uint8Array> | undefined
      let answered = false
      const finish = (): void => {
        port1.close()
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
        port1.postMessage({ abort: true })
        fail(new DOMException('The request was aborted.', 'AbortError'))
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      port1.onmessage = (e: MessageEvent) => {
        const m = e.data as FetchReply
        if ('status' in m) {
          answered = true
          const body = NO_BODY.has(m.status)
            ? null
            : new ReadableStream<Uint8Array>({
                start(controller) {
                  stream = controller
                },
              })
          resolve(new Response(body, { status: m.status, statusText: m.statusText, headers: m.contentType ? { 'Content-Type': m.contentType } : {} }))
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
      }
      const headers = Object.fromEntries(new Headers(init.headers ?? {}))
      const body = typeof init.body === 'string' || init.body instanceof Blob ? init.body : undefined
      port.postMessage({ type: 'fetch', request: { url, method: init.method ?? 'GET', headers, body } }, [port2])
    })
}
