/**
 * Tags put into HTML pages a server renders itself: SvelteKit's and Astro's dev servers render
 * their pages in their own middleware, where Vite's `transformIndexHtml` never runs. A middleware
 * placed before theirs wraps the response of each page request and writes the tags right after
 * `<head…>` of an HTML response (first in the head, before any script of the page). Anything that
 * is not HTML, is encoded (gzip …) or already carries the tags passes through untouched.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Whether the tags are already in `html` (the page went through `transformIndexHtml`). */
const MARKER = 'data-marginalia-loader'
const HEAD_OPEN = /<head(?:\s[^>]*)?>/i

/**
 * `page` (bytes) with `tags` inserted right after its `<head…>`; unchanged when it has no head or
 * has the tags. Searched in Latin-1, where a byte is a character, so a UTF-8 page is never re-encoded.
 */
function injectIntoHead(page: Buffer, tags: string): Buffer {
  const text = page.toString('latin1')
  if (text.includes(MARKER)) return page
  const head = HEAD_OPEN.exec(text)
  if (!head) return page
  const at = head.index + head[0].length
  return Buffer.concat([page.subarray(0, at), Buffer.from(tags, 'utf8'), page.subarray(at)])
}

type Next = (error?: unknown) => void

/**
 * A connect middleware: page requests (GET/HEAD accepting text/html) get `tags()` injected into
 * the HTML their handler answers. `tags()` undefined: nothing to inject (the server is not up).
 */
export function htmlInjector(tags: () => string | undefined): (req: IncomingMessage, res: ServerResponse, next: Next) => void {
  return (req, res, next) => {
    const accept = req.headers.accept ?? ''
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !accept.includes('text/html') || tags() === undefined) return next()
    wrap(res, () => tags() ?? '')
    next()
  }
}

function wrap(res: ServerResponse, tags: () => string): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
  /** undefined: not decided yet; true: an HTML page whose head has not passed yet; false: pass through. */
  let html: boolean | undefined
  let held: Buffer[] = []
  const take = (): Buffer => {
    const all = Buffer.concat(held)
    held = []
    return all
  }
  const decide = (): boolean => {
    if (html === undefined) {
      const type = String(res.getHeader('content-type') ?? '')
      html = /text\/html/i.test(type) && !res.getHeader('content-encoding')
      if (html && !res.headersSent) res.removeHeader('content-length')
    }
    return html
  }
  const toBytes = (chunk: unknown, encoding: unknown): Buffer =>
    typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk))
  // writeHead may carry the headers itself (content-type, content-length): look at them before they go.
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((r) => typeof r === 'object' && r !== null) as Record<string, unknown> | unknown[] | undefined
    if (headers && !Array.isArray(headers)) {
      for (const [k, v] of Object.entries(headers)) if (v !== undefined) res.setHeader(k, v as string)
      const message = rest.find((r) => typeof r === 'string')
      decide()
      return writeHead(status, ...(message !== undefined ? [message] : []))
    }
    decide()
    return writeHead(status, ...rest)
  }) as typeof res.writeHead
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!decide() || chunk === undefined || chunk === null) return write(chunk, ...rest)
    held.push(toBytes(chunk, rest[0]))
    const sofar = Buffer.concat(held)
    held = [sofar]
    if (!HEAD_OPEN.test(sofar.toString('latin1')) && sofar.length < 64 * 1024) {
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined
      callback?.()
      return true
    }
    html = false
    return write(injectIntoHead(take(), tags()), ...rest.filter((r) => typeof r === 'function'))
  }) as typeof res.write
  res.end = ((...args: unknown[]) => {
    const [chunk] = args
    if (!decide()) return end(...args)
    const callback = args.find((r) => typeof r === 'function')
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') held.push(toBytes(chunk, args[1]))
    html = false
    const out = injectIntoHead(take(), tags())
    return callback ? end(out, callback) : end(out)
  }) as typeof res.end
}
