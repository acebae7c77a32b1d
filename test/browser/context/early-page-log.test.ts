/**
 * The page log from the page's first line, in real Chromium: a console error and a fetch that
 * answers 500 in the page's <head>, before the overlay loads, reach the annotation — through the
 * head snippet (`loader.js`), through the Vite plugin's loader, and, with no early recorder at
 * all, the failed request from the Performance API when the overlay mounts. With the server down
 * the head snippet says so, as the Vite loader does, and the overlay comes up once it runs.
 * Nothing Marginalia adds logs an error in the page.
 */
import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { type AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ConsoleMessage, Page } from 'playwright-core'
import type { Plugin } from 'vite'
import { createMemoryStore, startHttpServer, type Store } from '../../../src/index.js'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { headSnippet } from '../../../src/integrations/shared/loader-script.js'
import { useChromium } from '../../helpers/chromium.js'
import type { Cleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia, listenOnLoopback } from '../../helpers/page.js'
import { testDir } from '../../helpers/store.js'
import { startVite } from '../../helpers/vite.js'
import { annotateMode, clickAt, send, ui } from '../overlay-anchor/setup.js'
import { freePort } from '../../helpers/ports.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/** What the page does in its <head>, before any overlay: the usual broken load. */
const BROKEN_HEAD = `<script>console.error('Boom at load: cart is undefined'); fetch('/api/cart?token=s3cr3t')</script>`
const BODY = '<h1>Shop</h1><button id="buy" type="button">Buy</button>'

/** The app: `/` is `html()`, `/api/cart` answers 500, anything else 404. */
async function serveApp(cleanups: Cleanups, html: () => string): Promise<string> {
  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    if (pathname === '/') res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(html())
    else if (pathname === '/api/cart') res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"db down"}')
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found')
  })
  return listenOnLoopback(server, cleanups)
}

/**
 * The console's errors, except the page's own and the browser's word on requests that failed
 * (Chromium prints "Failed to load resource" for every one, whoever made it): what is left was
 * logged by something Marginalia added.
 */
function foreignErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() !== 'error') return
    const text = m.text()
    if (text.startsWith('Boom at load') || text.startsWith('Failed to load resource')) return
    errors.push(text)
  })
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`))
  return errors
}

async function annotateBuy(page: Page, store: Store): Promise<{ kind: string; message: string; url?: string; status?: number }[]> {
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
  await annotateMode(page)
  await clickAt(page, await page.locator('#buy').boundingBox())
  await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
  await send(page, 'Buy does nothing')
  await eventually(() => store.getAllPending().length, 10_000).toBe(1)
  return store.getAllPending()[0]!.context?.entries ?? []
}

function expectBrokenLoad(entries: { kind: string; message: string; url?: string; status?: number }[], app: string): void {
  expect(entries.filter((e) => e.kind === 'console.error').map((e) => e.message)).toEqual(['Boom at load: cart is undefined'])
  const failed = entries.filter((e) => e.kind === 'network')
  expect(failed.map((e) => [e.url, e.status])).toEqual([[`${app}/api/cart?token=REDACTED`, 500]])
}

describe.skipIf(!enabled)('the page log from the first line', () => {
  it('the head snippet records a console error and a 500 fetch made in <head> before the overlay loads; the overlay takes them over', { timeout: 60_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const app = await serveApp(cleanups, () => `<!doctype html><html><head><title>Shop</title>${headSnippet({ server: http.url, command: 'npx marginalia serve' })}${BROKEN_HEAD}</head><body>${BODY}</body></html>`)
    const { page } = await chromium.newPage()
    const errors = foreignErrors(page)
    await page.goto(`${app}/`)
    const entries = await annotateBuy(page, store)
    expectBrokenLoad(entries, app)
    // The overlay's own requests never join the log, and the note never showed.
    expect(entries.some((e) => e.url?.startsWith(http.url))).toBe(false)
    expect(await page.locator('[data-marginalia-loader]').count()).toBe(0)
    expect(errors).toEqual([])
  })

  it('the Vite plugin\'s loader records from its first line', { timeout: 60_000 }, async () => {
    const { dir: root } = testDir(cleanups, 'marginalia-early-')
    writeFileSync(path.join(root, 'index.html'), `<!doctype html><html><head><title>Shop</title>${BROKEN_HEAD}</head><body>${BODY}</body></html>`)
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port: 0, log: () => {} })
    cleanups.push(() => http.close())
    const api: Plugin = {
      name: 'api',
      configureServer: (server) => void server.middlewares.use('/api/cart', (_req, res) => void res.writeHead(500).end('db down')),
    }
    const vite = await startVite(cleanups, root, [api, marginalia({ start: false, port: Number(new URL(http.url).port), sourceLocations: false })])
    const app = `http://127.0.0.1:${(vite.httpServer!.address() as AddressInfo).port}`
    const { page } = await chromium.newPage()
    const errors = foreignErrors(page)
    await page.goto(`${app}/`)
    const entries = await annotateBuy(page, store)
    expectBrokenLoad(entries, app)
    expect(errors).toEqual([])
  })

  it('with no early recorder, a request that failed before the overlay mounted comes from the Performance API', { timeout: 60_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const app = await serveApp(cleanups, () => `<!doctype html><html><head><title>Shop</title>${BROKEN_HEAD}<link rel="stylesheet" href="/missing.css"></head><body>${BODY}<script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>`)
    const { page } = await chromium.newPage()
    const errors = foreignErrors(page)
    await page.goto(`${app}/`)
    const entries = await annotateBuy(page, store)
    // The console error came before anything listened: it is not there. The requests are, oldest first.
    expect(entries.filter((e) => e.kind === 'console.error')).toEqual([])
    const failed = entries.filter((e) => e.kind === 'network').map((e) => [e.url, e.status, e.message])
    expect(failed).toHaveLength(2)
    expect(failed).toContainEqual([`${app}/api/cart?token=REDACTED`, 500, `${app}/api/cart?token=REDACTED → 500 (fetch)`])
    expect(failed).toContainEqual([`${app}/missing.css`, 404, `${app}/missing.css → 404 (link)`])
    expect(errors).toEqual([])
  })

  it('the head snippet with the server down says so, as the Vite loader does, and the overlay comes up once the server runs', { timeout: 90_000 }, async () => {
    const port = await freePort()
    const server = `http://127.0.0.1:${port}`
    const command = `npx marginalia serve --port ${port}`
    const app = await serveApp(cleanups, () => `<!doctype html><html><head><title>Shop</title>${headSnippet({ server, command })}${BROKEN_HEAD}</head><body>${BODY}</body></html>`)
    const { page } = await chromium.newPage()
    const errors = foreignErrors(page)
    await page.goto(`${app}/`)
    const note = page.locator('[data-marginalia-loader][role="status"]')
    await eventually(() => note.locator('span').textContent()).toBe(`Marginalia server not running — start it with \`${command}\``)
    expect(await page.locator('marginalia-overlay').count()).toBe(0)

    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port, log: () => {} })
    cleanups.push(() => http.close())
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 40_000 })
    expect(await note.count()).toBe(0)
    expect(await page.evaluate(() => window.Marginalia?.server)).toBe(http.url)
    // Late, but the failed request of the load is still there (Performance API).
    const entries = await annotateBuy(page, store)
    expect(entries.filter((e) => e.kind === 'network').map((e) => [e.url, e.status])).toEqual([[`${app}/api/cart?token=REDACTED`, 500]])
    expect(errors).toEqual([])
  })

  it('the contract: the overlay takes over any compatible log at Symbol.for("marginalia.pageLog") (version 1, recent, ignore), and replaces an unknown version', { timeout: 60_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    // What another release's early script (the browser extension's) leaves: only the contract.
    const foreign = (version: number) =>
      `<script>window[Symbol.for('marginalia.pageLog')] = { version: ${version}, recent: function () { return [{ kind: 'console.warn', at: new Date().toISOString(), message: 'kept by the extension' }] }, ignore: function (test) { window.ignoredOverlay = test('${http.url}/api/sessions') } }</script>`
    let version = 1
    const app = await serveApp(cleanups, () => `<!doctype html><html><head><title>Shop</title>${foreign(version)}</head><body>${BODY}<script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>`)
    const { page } = await chromium.newPage()
    const errors = foreignErrors(page)
    await page.goto(`${app}/`)
    const entries = await annotateBuy(page, store)
    expect(entries.map((e) => [e.kind, e.message])).toEqual([['console.warn', 'kept by the extension']])
    expect(await page.evaluate(() => (window as unknown as { ignoredOverlay?: boolean }).ignoredOverlay)).toBe(true)

    // A version the overlay does not know: it installs its own log in its place.
    version = 99
    await page.goto(`${app}/`)
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
    await page.evaluate(() => console.error('Boom at load: after the overlay'))
    expect(await page.evaluate(() => (window as unknown as Record<symbol, { version: number; recent(): { message: string }[] }>)[Symbol.for('marginalia.pageLog')]!.recent().map((e) => e.message))).toEqual(['Boom at load: after the overlay'])
    expect(errors).toEqual([])
  })
})
