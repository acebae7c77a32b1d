/**
 * What a browser test serves: the Marginalia server on a memory store, and fixture pages from a
 * plain node:http server on their own loopback port (so the overlay runs cross-origin, as in a
 * real dev app).
 */
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { createMemoryStore, startHttpServer, type HttpServer, type HttpServerOptions, type Store } from '../../src/index.js'
import type { Cleanups } from './cleanup.js'

/** `marginalia serve` in this process: `store` (default: a fresh memory store) on a loopback port, with the overlay and inbox assets; both closed by `cleanups`. */
export async function startMarginalia(cleanups: Cleanups, options: HttpServerOptions = {}, store: Store = createMemoryStore()): Promise<{ store: Store; http: HttpServer }> {
  cleanups.push(() => store.close())
  const http = await startHttpServer(store, { port: 0, log: () => {}, ...options })
  cleanups.push(() => http.close())
  return { store, http }
}

/** Listen on a free loopback port; closed (its connections cut) by `cleanups`. Its origin. */
export async function listenOnLoopback(server: Server, cleanups: Cleanups): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export interface PageServer {
  origin: string
  close(): Promise<void>
}

/** Serve `pages` (pathname → HTML); anything else is 404. Closed by `cleanups` when given. */
export async function servePages(pages: Record<string, string | (() => string)>, cleanups?: Cleanups): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    const page = pages[pathname]
    if (page === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found')
      return
    }
    const html = typeof page === 'function' ? page() : page
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const served: PageServer = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  cleanups?.push(() => served.close())
  return served
}

/** A page laid out for a phone (`width=device-width`): `body` inside a body styled `bodyStyle`. */
export function phonePage(title: string, bodyStyle: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body style="${bodyStyle}">
${body}</body></html>`
}

/** A small shop page with the overlay's one script tag pointing at `serverUrl`. */
export function shopPage(serverUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fixture shop</title>
<style>
  /* Hostile page CSS: the overlay must not be affected. */
  * { font-family: "Comic Sans MS", cursive !important; }
  button { color: red; }
  body { margin: 0; padding: 24px; }
  .grid { display: grid; grid-template-columns: repeat(3, 180px); gap: 12px; }
  .card { border: 1px solid #ccc; padding: 12px; height: 90px; }
</style></head>
<body>
  <header><h1 class="title">Fixture shop</h1><nav><a href="/other">Other page</a></nav></header>
  <main>
    <div class="grid">
      <div class="card"><h2>Fern</h2><button class="buy">Buy</button></div>
      <div class="card"><h2>Cactus</h2><button class="buy">Buy</button></div>
      <div class="card"><h2>Palm</h2><button class="buy">Buy</button></div>
    </div>
    <p id="intro">Plants delivered to your door. <span class="promo">Free shipping over $50.</span></p>
    <button id="checkout" type="button">Checkout</button>
  </main>
  <script>
    window.pageClicks = 0
    window.pageKeys = 0
    document.addEventListener('click', () => { window.pageClicks++ })
    document.addEventListener('keydown', () => { window.pageKeys++ })
  </script>
  <script src="${serverUrl}/overlay.js" defer></script>
</body></html>`
}

/** The early script (src/browser/early/main.ts: page log and steps recorder) bundled from the sources, as a page's first inline script. */
export async function buildEarlyScript(): Promise<string> {
  const { build } = await import('esbuild')
  const out = await build({ entryPoints: [path.resolve(import.meta.dirname, '../../src/browser/early/main.ts')], bundle: true, minify: true, format: 'iife', write: false, target: 'es2022' })
  return out.outputFiles[0]!.text
}
