/**
 * What the overlay costs the load of a page with no annotations (a 1 000-row table), with its
 * script tag and with the head snippet: no layout or style recalculation forced by its scripts,
 * no request to its server before the page's load event, the toolbar in the page only once the
 * server has answered (saying the agent's state) and no text written in it after that, /health asked once, one live connection
 * (the permission prompts' watch on it), a handful of requests in all until it is connected; with the snippet, the recorders the loader started are
 * taken over (the `early` chunk is not fetched), with the tag alone that chunk brings them; one
 * keydown listener on the window (the recorder's, which calls the overlay's); sessionStorage not
 * asked for; the toolbar's words in two fonts (12px, two weights). And
 * pressing Annotate costs the page no top-layer pass, the picker answers where the pointer is, and
 * a click held while annotate mode comes is picked, not recorded as a step to reproduce.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { headSnippet } from '../../../src/integrations/shared/loader-script.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

function tablePage(head: string): string {
  const rows: string[] = []
  for (let i = 0; i < 1000; i++) rows.push(`<tr><td>${i + 1}</td><td>Item ${i + 1}</td><td>${(i * 37) % 1000}</td><td>${['open', 'paid', 'sent'][i % 3]}</td></tr>`)
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders</title>${head}
<style>body{font:14px sans-serif;margin:16px}td{border-bottom:1px solid #ddd;padding:4px 10px}</style></head>
<body><h1>Orders</h1><table><tbody>${rows.join('')}</tbody></table></body></html>`
}

interface Frame {
  url?: string
  functionName?: string
  lineNumber?: number
  columnNumber?: number
}

interface TraceEvent {
  name: string
  ph: string
  ts: number
  args?: { beginData?: { stackTrace?: Frame[] }; data?: { stackTrace?: Frame[] } }
}

/** Load `path`, tracing; until the overlay is connected and its live stream asked for. */
async function load(serverUrl: string, origin: string, path: string) {
  const { context, page } = await chromium.newPage()
  const cdp = await context.newCDPSession(page)
  const requests: { path: string; search: string; at: number }[] = []
  let loadedAt = Infinity
  cdp.on('Network.requestWillBeSent', (e) => {
    const url = new URL(e.request.url)
    if (url.origin === serverUrl) requests.push({ path: url.pathname, search: url.search, at: e.timestamp })
  })
  cdp.on('Page.loadEventFired', (e) => void (loadedAt = Math.min(loadedAt, e.timestamp)))
  await cdp.send('Network.enable')
  await cdp.send('Page.enable')
  // What the overlay writes in its shadow root after its first render (each text written lays the
  // page out and paints it again: a frame of a 1 000-row page's main thread each time).
  await page.addInitScript(() => {
    // What the toolbar says when it enters the page, and the texts written in it after that.
    const seen: { written: string[]; agentWhenShown?: string } = { written: [] }
    Object.assign(window, { __overlayWrites: seen })
    // Whether a script asks for sessionStorage as the page loads (its first use is a blocking call to the browser).
    const sessionGetter = (Object.getOwnPropertyDescriptor(window, 'sessionStorage') ?? Object.getOwnPropertyDescriptor(Window.prototype, 'sessionStorage'))!.get!
    Object.defineProperty(window, 'sessionStorage', { configurable: true, get: () => (Object.assign(window, { __sessionAsked: true }), sessionGetter.call(window) as Storage) })
    let shadow: { root: ShadowRoot; observer: MutationObserver } | undefined
    let shown = false
    const attach = Element.prototype.attachShadow
    Element.prototype.attachShadow = function (init: ShadowRootInit) {
      const root = attach.call(this, init)
      if (this.localName === 'marginalia-overlay') {
        const observer = new MutationObserver((list) => {
          if (shown) for (const m of list) if (m.type !== 'attributes') seen.written.push((m.target as Element).className || m.target.nodeName)
        })
        observer.observe(root, { subtree: true, childList: true, characterData: true })
        shadow = { root, observer }
        const entered = new MutationObserver(() => {
          if (shown || !shadow || !document.documentElement.contains(shadow.root.host)) return
          // What was written before the host went in (in the same task) is not "after".
          shadow.observer.takeRecords()
          shown = true
          seen.agentWhenShown = shadow.root.querySelector('.agent-text')?.textContent ?? undefined
          entered.disconnect()
        })
        entered.observe(document.documentElement, { childList: true })
      }
      return root
    }
  })
  const events: TraceEvent[] = []
  cdp.on('Tracing.dataCollected', (e) => void events.push(...(e.value as unknown as TraceEvent[])))
  const traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve))
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline.stack', transferMode: 'ReportEvents' })
  await page.goto(origin + path, { waitUntil: 'load' })
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
  await eventually(() => requests.some((r) => r.path.endsWith('/events')), 10_000).toBe(true)
  // The recorders: in the page from its first line (the head snippet's loader), or from the early
  // chunk, fetched as the overlay starts and not waited for by its connection (it may come after).
  await eventually(() => page.evaluate(() => [Symbol.for('marginalia.pageLog'), Symbol.for('marginalia.steps')].every((k) => Boolean((window as unknown as Record<symbol, unknown>)[k]))), 10_000).toBe(true)
  await cdp.send('Tracing.end')
  await traced
  /** Layouts and style recalculations with a script of the overlay's server on their stack: forced by it. */
  const forced = events
    .filter((e) => (e.name === 'Layout' || e.name === 'UpdateLayoutTree') && e.ph !== 'E')
    .filter((e) => (e.args?.beginData?.stackTrace ?? e.args?.data?.stackTrace ?? []).some((f) => f.url?.startsWith(serverUrl)))
    .map((e) => {
      const f = (e.args?.beginData?.stackTrace ?? e.args?.data?.stackTrace)![0]!
      return `${e.name} <- ${f.functionName}@${f.url?.slice(serverUrl.length)}:${f.lineNumber}:${f.columnNumber}`
    })
  // Key presses: the recorder's keydown listener calls the overlay's (one listener on the window, not two).
  const { result: win } = await cdp.send('Runtime.evaluate', { expression: 'window' })
  const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: win.objectId! })
  const keydownListeners = listeners.filter((l) => l.type === 'keydown').length
  const written = await page.evaluate(() => (window as unknown as { __overlayWrites: { written: string[]; agentWhenShown?: string } }).__overlayWrites)
  const inPage = await page.evaluate(() => ({
    sessionStorageAsked: Boolean((window as unknown as { __sessionAsked?: boolean }).__sessionAsked),
    /** The fonts the toolbar's words are drawn in (weight, size, family): each one the page has not drawn yet is a font lookup. */
    toolbarFonts: [
      ...new Set(
        [...document.querySelector('marginalia-overlay')!.shadowRoot!.querySelectorAll('*')]
          .filter((el) => [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '') && el.getClientRects().length > 0)
          .map((el) => {
            const cs = getComputedStyle(el)
            return `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`
          }),
      ),
    ].sort(),
    popover: document.querySelector('marginalia-overlay')!.hasAttribute('popover'),
    log: Boolean((window as unknown as Record<symbol, unknown>)[Symbol.for('marginalia.pageLog')]),
    steps: Boolean((window as unknown as Record<symbol, unknown>)[Symbol.for('marginalia.steps')]),
  }))
  return { requests, loadedAt, forced, inPage, keydownListeners, written }
}

/** Load /orders and check what every load must be: nothing forced, no popover, the recorders running, no request before the load event, /health once, 7 requests at most. */
async function quietLoad(serverUrl: string, origin: string) {
  const loaded = await load(serverUrl, origin, '/orders')
  const { requests, loadedAt, forced, inPage, keydownListeners, written } = loaded
  expect(forced).toEqual([])
  // The toolbar enters the page once the server has answered, saying the agent's state: no
  // "Connecting…" replaced a moment later (each text written lays the page out and paints it again).
  expect(written).toEqual({ written: [], agentWhenShown: 'No agent connected' })
  // The steps this tab kept are read when first needed, not as the page loads; the toolbar's
  // words are in two fonts (one size, two weights), each a lookup the first time it is drawn.
  expect(inPage).toEqual({ sessionStorageAsked: false, toolbarFonts: ['400 12px system-ui, sans-serif', '700 12px system-ui, sans-serif'], popover: false, log: true, steps: true })
  expect(keydownListeners).toBe(1)
  const api = requests.filter((r) => !r.path.endsWith('.js'))
  for (const r of api) expect({ path: r.path, afterLoad: r.at >= loadedAt }).toEqual({ path: r.path, afterLoad: true })
  expect(api.filter((r) => r.path === '/health')).toHaveLength(1)
  // One live connection: the page's stream carries the agent's permission requests too (a browser
  // keeps six connections to a server, shared by every tab of the app).
  expect(api.filter((r) => r.path.endsWith('/events')).map((r) => `${r.path}${r.search}`)).toEqual(['/api/events?permissions=1&lastEventId=0'])
  expect(requests.length).toBeLessThanOrEqual(7)
  return loaded
}

/** Annotate mode's chunk held at the network: `chunkAsked` once the page asks for it, sent on `open()`. */
async function holdAnnotateChunk(page: Page): Promise<{ chunkAsked: Promise<void>; open: () => void }> {
  let asked!: () => void
  const chunkAsked = new Promise<void>((resolve) => (asked = resolve))
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  await page.route(/\/chunks\/annotate-/, async (route) => {
    asked()
    await gate
    await route.continue()
  })
  return { chunkAsked, open }
}

describe.skipIf(!enabled)('the overlay at load', () => {
  it('with the tag: no forced layout, nothing before the load event, /health once, the recorders from the early chunk', { timeout: 60_000 }, async () => {
    const { http } = await startMarginalia(cleanups)
    const pages = await servePages({ '/orders': tablePage(`<script src="${http.url}/overlay.js" data-prefetch="false" defer></script>`) }, cleanups)
    const { requests } = await quietLoad(http.url, pages.origin)
    const scripts = requests.filter((r) => r.path.endsWith('.js')).map((r) => r.path.replace(/-[^/]*$/, ''))
    expect(scripts).toEqual(['/overlay.js', '/chunks/early'])
  })

  it('with the head snippet: the loader\'s recorders taken over (no early chunk), no forced layout, nothing before the load event', { timeout: 60_000 }, async () => {
    const { http } = await startMarginalia(cleanups)
    const head = headSnippet({ server: http.url, command: 'npx marginalia serve' }).replace('<script src=', '<script data-prefetch="false" src=')
    const pages = await servePages({ '/orders': tablePage(head) }, cleanups)
    const { requests } = await quietLoad(http.url, pages.origin)
    expect(requests.filter((r) => r.path.endsWith('.js')).map((r) => r.path)).toEqual(['/loader.js', '/overlay.js'])
  })

  it('pressing Annotate: the overlay stays out of the top layer, what the pointer moved onto while annotate mode was coming is highlighted with no further move, the crosshair follows', { timeout: 60_000 }, async () => {
    const { http } = await startMarginalia(cleanups)
    const pages = await servePages({ '/orders': tablePage(`<script src="${http.url}/overlay.js" data-prefetch="false" defer></script>`) }, cleanups)
    const { page } = await chromium.newPage()
    await page.goto(pages.origin + '/orders', { waitUntil: 'load' })
    const button = page.locator('marginalia-overlay .annotate')
    await button.waitFor({ timeout: 15_000 })
    // Annotate mode's chunk is held at the network until the pointer has moved onto a cell.
    const { chunkAsked, open } = await holdAnnotateChunk(page)
    const box = (await button.boundingBox())!
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
    await chunkAsked
    const cell = page.locator('tr:nth-child(4) td:nth-child(2)')
    const target = (await cell.boundingBox())!
    await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2)
    open()
    const highlight = page.locator('marginalia-overlay .highlight')
    await highlight.waitFor({ state: 'visible', timeout: 15_000 })
    const shown = (await highlight.boundingBox())!
    expect(Math.abs(shown.y - target.y)).toBeLessThan(4)
    expect(Math.abs(shown.height - target.height)).toBeLessThan(6)
    expect(await page.evaluate(() => document.querySelector('marginalia-overlay')!.hasAttribute('popover'))).toBe(false)
    await eventually(() => page.evaluate(() => document.documentElement.hasAttribute('data-marginalia-annotating')), 5_000).toBe(true)
  })

  it('a click made while annotate mode was coming picks the element and is not a step to reproduce; the page\'s clicks before it are', { timeout: 60_000 }, async () => {
    const { http } = await startMarginalia(cleanups)
    const buttons = '<p><button type="button">Refresh</button> <button type="button" id="refund">Refund</button></p>'
    const pages = await servePages({ '/orders': tablePage(`<script src="${http.url}/overlay.js" data-prefetch="false" defer></script>`).replace('<h1>Orders</h1>', `<h1>Orders</h1>${buttons}`) }, cleanups)
    const { page } = await chromium.newPage()
    await page.goto(pages.origin + '/orders', { waitUntil: 'load' })
    const button = page.locator('marginalia-overlay .annotate')
    await button.waitFor({ timeout: 15_000 })
    await page.getByRole('button', { name: 'Refresh' }).click()
    const { chunkAsked, open } = await holdAnnotateChunk(page)
    await button.click()
    await chunkAsked
    const refund = (await page.locator('#refund').boundingBox())!
    await page.mouse.click(refund.x + refund.width / 2, refund.y + refund.height / 2)
    open()
    const lines = page.locator('marginalia-overlay .composer .step-list li .step-text')
    await expect.poll(() => lines.allTextContents(), { timeout: 15_000 }).toEqual(['1. open /orders', '2. viewport 1024×700', '3. click button "Refresh"'])
    expect(await page.locator('marginalia-overlay .composer').textContent()).toContain('Refund')
  })
})
