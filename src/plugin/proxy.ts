/**
 * The Marginalia server through the app's own origin: a dev server forwards
 * `/__marginalia/*` to it, so the overlay script and its API calls are `'self'` to a page with a
 * strict Content-Security-Policy (`script-src 'self'; connect-src 'self'`). Streams pass through
 * unbuffered (the live event stream is Server-Sent Events). When the server does not answer, the
 * connection is dropped, so the overlay sees "unreachable", as it would without the proxy.
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http'

/** Where the plugin mounts the proxy on the dev server. */
export const PROXY_PREFIX = '/__marginalia'

export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

/**
 * A connect-style middleware forwarding `prefix/…` to `target` (e.g. `http://127.0.0.1:4848`, or
 * a function giving it once known); anything else, or everything while there is no target, goes
 * on to `next`.
 */
export function marginaliaProxy(target: string | (() => string | undefined), prefix = PROXY_PREFIX): Middleware {
  return (req, res, next) => {
    const url = req.url ?? '/'
    const base = typeof target === 'function' ? target() : target
    if (base === undefined || (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`))) {
      next()
      return
    }
    const to = new URL(base)
    const path = url.slice(prefix.length) || '/'
    // The Host is the server's own (it answers only to its names); Origin goes as the browser sent it, and is checked there.
    const headers = { ...req.headers, host: to.host }
    const upstream = request({ protocol: to.protocol, hostname: to.hostname, port: to.port, method: req.method, path, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => {
      // Not running: the browser sees the connection fail, as it would going there directly.
      res.destroy()
    })
    // The page went away (an event stream closed): so does the request upstream.
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  }
}
