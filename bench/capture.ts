/**
 * `capture` end to end: from the tool call to the image, on a simple page in Chromium with the
 * overlay as it ships (dist/overlay), the server and the store in this process. What it includes:
 * the request event, the live stream to the page, two frames settling, the picture, its upload,
 * the answer event and the bytes read back as MCP image content. Skipped (undefined) when there
 * is no Chromium.
 */
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { createMemoryStore, createToolRegistry, startHttpServer } from '../src/index.js'
import { median, percentile } from './lib.js'

const page = (server: string) => `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; padding: 32px; font: 15px system-ui, sans-serif; } #buy { background: #4f46e5; color: #fff; border: 0; border-radius: 6px; padding: 10px 16px; }
</style></head><body><h1>Checkout</h1><p>Two plants, $24.</p><button id="buy">Buy now</button>
<script src="${server}/overlay.js"></script></body></html>`

export async function captureTimes(runs: number): Promise<{ p50: number; p95: number } | undefined> {
  const executablePath = process.env.MARGINALIA_CHROMIUM || '/usr/bin/chromium'
  if (!existsSync(executablePath)) return undefined
  const store = createMemoryStore()
  const http = await startHttpServer(store, { port: 0, log: () => {} })
  const site = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(http.url)))
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  try {
    const session = await store.createSession({ url: `${origin}/` })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Make it green', url: session.url, element: { selector: '#buy' } })
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await tab.goto(`${origin}/`)
    await tab.locator('marginalia-overlay .pin').waitFor({ timeout: 15_000 })
    const registry = createToolRegistry(store)
    const times: number[] = []
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now()
      const outcome = await registry.call('capture', { id: a.id, timeoutMs: 10_000 })
      const ms = performance.now() - t0
      if (!outcome.ok || !outcome.content?.some((c) => c.type === 'image')) throw new Error(`capture failed: ${JSON.stringify(outcome).slice(0, 300)}`)
      if (i > 0) times.push(ms) // the first run warms up (fonts, the library's caches)
    }
    return { p50: median(times), p95: percentile(times, 95) }
  } finally {
    await browser.close()
    await http.close()
    site.closeAllConnections()
    site.close()
    await store.close()
  }
}
