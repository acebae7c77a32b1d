/**
 * The Marginalia server through the app's own origin: a dev server forwards
 * `/__marginalia/*` to it, so the overlay script and its API calls are `'self'` to a page with a
 * strict Content-Security-Policy (`script-src 'self'; connect-src 'self'`). Streams pass through
 * unbuffered (the live event stream is Server-Sent Events). When the server does not answer, the
 * connection is dropped, so the overlay sees "unreachable", as it would without the proxy.
 *
 * The proxy adds no reach: the request keeps its `Host` (and `Origin`), so the server checks them
 * as if the browser had come straight to it (a `Host: 192.168.1.10` is refused there either way),
 * and a client that is not on this machine is refused here unless a token is configured (then the
 * server asks it for that token). A dev server started with `--host` is reachable from the network;
 * the API behind it is not, without a token.
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http'
import { isIP } from 'node:net'

/** Where the plugin mounts the proxy on the dev server. */
export const PROXY_PREFIX = '/__marginalia'

export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

export interface ProxyOptions {
  /** A token is configured: clients beyond loopback are let through, and the server asks them for it. */
  tokenConfigured?: boolean
}

/** Whether a socket's remote address is this machine: 127.x.x.x, ::1, or either as an IPv4-mapped IPv6 address. */
function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false
  const a = address.toLowerCase().replace(/^::ffff:/, '')
  return a === '::1' || (isIP(a) === 4 && a.startsWith('127.'))
}

/** The refusal a client beyond loopback gets without a token: the server's error shape, naming the fix. */
function refuseRemote(res: ServerResponse, address: string | undefined): void {
  const body = JSON.stringify({
    error: {
      code: 'FORBIDDEN',
      message: `The Marginalia API through this dev server answers only clients on this machine (this request came from ${address ?? 'an unknown address'}). To use it from another device, configure a token: marginalia({ token }) in vite.config, or MARGINALIA_TOKEN.`,
    },
  })
  res.writeHead(403, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store' }).end(body)
}

/**
 * A connect-style middleware forwarding `prefix/…` to `target` (e.g. `http://127.0.0.1:4848`, or
 * a function giving it once known); anything else, or everything while there is no target, goes
 * on to `next`.
 */
export function marginaliaProxy(target: string | (() => string | undefined), prefix = PROXY_PREFIX, options: ProxyOptions = {}): Middleware {
  return (req, res, next) => {
    const url = req.url ?? '/'
    const base = typeof target === 'function' ? target() : target
    if (base === undefined || (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`))) {
      next()
      return
    }
    const remote = req.socket.remoteAddress
    if (!options.tokenConfigured && !isLoopbackAddress(remote)) {
      req.resume()
      refuseRemote(res, remote)
      return
    }
    const to = new URL(base)
    const path = url.slice(prefix.length) || '/'
    // Host and Origin go as the browser sent them: the server checks them as if the browser came straight to it.
    const upstream = request({ protocol: to.protocol, hostname: to.hostname, port: to.port, method: req.method, path, headers: req.headers }, (answer) => {
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
