/** A plain node:http server for fixture pages, on its own loopback port (so the overlay runs cross-origin, as in a real dev app). */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface PageServer {
  origin: string
  close(): Promise<void>
}

/** Serve `pages` (pathname → HTML); anything else is 404. */
export async function servePages(pages: Record<string, string | (() => string)>): Promise<PageServer> {
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
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
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
