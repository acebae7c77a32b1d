/**
 * Puts the overlay's tags into HTML a dev server renders itself — server-side rendering by a
 * framework's own middleware (React Router, and any app that answers HTML without index.html), which
 * Vite's `transformIndexHtml` never sees. A connect middleware that wraps the response: when it is
 * HTML (Content-Type text/html, not compressed) and does not carry the tags already, they go right
 * after the opening `<head>`; every other response passes through untouched, byte for byte.
 * Streamed HTML is held only until its `<head>` has been seen.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Look this far into a streamed page for `<head>`; a page without one by then is passed through. */
const HEAD_WINDOW = 64 * 1024
const HEAD_TAG = /<head(?:\s[^>]*)?>/i

type Next = (err?: unknown) => void
type Chunk = string | Buffer | Uint8Array
type WriteCb = (error?: Error | null) => void

/** Whether a request may get a page the middleware adds the tags to: a GET asking for HTML. */
function wantsHtml(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html')
}

/**
 * The middleware. `tags()` gives the HTML to add (undefined: add nothing); `marker` is a string
 * the tags contain, so a page that has them (index.html through transformIndexHtml) is left alone.
 */
export function injectIntoHtml(tags: () => string | undefined, marker: string) {
  return (req: IncomingMessage, res: ServerResponse, next: Next): void => {
    if (!wantsHtml(req)) return next()
    const write = res.write.bind(res) as (chunk: Chunk, encoding?: BufferEncoding, cb?: WriteCb) => boolean
    const end = res.end.bind(res) as (chunk?: Chunk | (() => void), encoding?: BufferEncoding, cb?: () => void) => ServerResponse
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
    let state: 'undecided' | 'holding' | 'through' = 'undecided'
    const held: Buffer[] = []
    let heldBytes = 0

    const isHtml = (headers?: Record<string, unknown>): boolean => {
      const lower = Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
      const type = String(lower['content-type'] ?? res.getHeader('content-type') ?? '')
      const encoding = String(lower['content-encoding'] ?? res.getHeader('content-encoding') ?? '')
      return /^text\/html\b/i.test(type) && (encoding === '' || encoding === 'identity')
    }
    const decide = (headers?: Record<string, unknown>): void => {
      if (state !== 'undecided') return
      state = tags() !== undefined && isHtml(headers) ? 'holding' : 'through'
    }
    /** The held text with the tags in, or undefined while `<head>` is not seen yet (and may still come). */
    const release = (final: boolean): Buffer | undefined => {
      // Searched in Latin-1, where one byte is one character: a UTF-8 character split across
      // chunks is never decoded half, and the bytes go out exactly as they came.
      const bytes = Buffer.concat(held)
      const text = bytes.toString('latin1')
      const head = HEAD_TAG.exec(text)
      if (!head && !final && heldBytes < HEAD_WINDOW) return undefined
      state = 'through'
      held.length = 0
      const add = tags()
      if (!head || add === undefined || text.includes(marker)) return bytes
      const at = head.index + head[0].length
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(add, 'utf8'), bytes.subarray(at)])
    }
    const toBuffer = (chunk: Chunk, encoding?: BufferEncoding): Buffer => (typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : Buffer.from(chunk))

    res.writeHead = ((status: number, ...rest: unknown[]) => {
      // writeHead(status, [reason], [headers]): the headers object is where a Content-Length would be.
      const headers = rest.find((r) => typeof r === 'object' && r !== null && !Array.isArray(r)) as Record<string, unknown> | undefined
      decide(headers)
      if (state === 'holding') {
        if (headers) for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-length') delete headers[k]
        res.removeHeader('content-length')
      }
      return writeHead(status, ...rest)
    }) as typeof res.writeHead

    res.write = ((chunk: Chunk, encoding?: BufferEncoding | WriteCb, cb?: WriteCb) => {
      const enc = typeof encoding === 'string' ? encoding : undefined
      const done = typeof encoding === 'function' ? encoding : cb
      decide()
      if (state !== 'holding') return write(chunk, enc, done)
      if (!res.headersSent) res.removeHeader('content-length')
      const buf = toBuffer(chunk, enc)
      held.push(buf)
      heldBytes += buf.length
      const out = release(false)
      if (out === undefined) {
        done?.()
        return true
      }
      return write(out, undefined, done)
    }) as typeof res.write

    res.end = ((chunk?: Chunk | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void) => {
      const data = typeof chunk === 'function' || chunk === undefined || chunk === null ? undefined : chunk
      const enc = typeof encoding === 'string' ? encoding : undefined
      const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb
      decide()
      if (state !== 'holding') return data === undefined ? end(done) : end(data, enc, done)
      if (data !== undefined) {
        const buf = toBuffer(data, enc)
        held.push(buf)
        heldBytes += buf.length
      }
      const out = release(true) ?? Buffer.alloc(0)
      if (!res.headersSent) res.setHeader('content-length', out.length)
      return end(out, undefined, done)
    }) as typeof res.end

    next()
  }
}
