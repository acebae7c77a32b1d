/**
 * What a page fetches for the overlay before the person annotates: overlay.js (and, with the tag
 * alone, the recorders' chunk), compressed; annotate mode and the panels' styles come when the
 * person reaches for the toolbar (or on first use), the chunk Send needs (screenshots, sources)
 * when annotate mode starts — or all of them when the browser is idle after load, with
 * data-prefetch="idle" — and a second page takes them from the browser's cache without asking the
 * server. Pressing Annotate then picks and sends an annotation with its screenshot, end to end.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/** Compressed bytes overlay.js may take over the wire (brotli) before the person annotates. */
const CORE_WIRE_BUDGET = 25 * 1024

function page(serverUrl: string, attributes: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lazy</title></head>
<body><main><h1 class="title">Plants</h1><button id="buy" type="button">Buy</button></main>
<script src="${serverUrl}/overlay.js" ${attributes} defer></script></body></html>`
}

async function setup(attributes: string) {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await startHttpServer(store, { port: 0, log: () => {} })
  cleanups.push(() => http.close())
  const pages = await servePages({ '/a': () => page(http.url, attributes), '/b': () => page(http.url, attributes) }, cleanups)
  const { context, page: tab } = await chromium.newPage()
  /** Every script the page asked the overlay's server for: its bytes on the wire (headers and body), its coding, and whether the browser's cache answered instead. */
  const scripts = new Map<string, { path: string; status: number; encoding: string | undefined; wire: number; cached: boolean; done: boolean }>()
  const cdp = await context.newCDPSession(tab)
  cdp.on('Network.responseReceived', (e) => {
    const url = new URL(e.response.url)
    if (url.origin !== http.url || !url.pathname.endsWith('.js')) return
    const encoding = Object.entries(e.response.headers).find(([k]) => k.toLowerCase() === 'content-encoding')?.[1]
    scripts.set(e.requestId, { path: url.pathname, status: e.response.status, encoding, wire: 0, cached: Boolean(e.response.fromDiskCache || e.response.fromPrefetchCache) || e.response.status === 304, done: false })
  })
  const fromCache = new Set<string>()
  cdp.on('Network.requestServedFromCache', (e) => fromCache.add(e.requestId))
  cdp.on('Network.loadingFinished', (e) => {
    const s = scripts.get(e.requestId)
    if (s) Object.assign(s, { wire: e.encodedDataLength, done: true, cached: s.cached || fromCache.has(e.requestId) })
  })
  await cdp.send('Network.enable')
  /** The scripts fetched so far, once each has finished loading. */
  const settled = async () => {
    await eventually(() => [...scripts.values()].every((s) => s.done)).toBe(true)
    return [...scripts.values()]
  }
  return { store, http, origin: pages.origin, tab, scripts, settled }
}

async function open(tab: Page, url: string): Promise<void> {
  await tab.goto(url)
  await tab.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
}

/** From the click on Annotate to annotate mode on (the picker listening), and to the chunk Send needs being fetched, in ms. */
function annotateTimes(tab: Page) {
  return tab.evaluate(async () => {
    const root = document.querySelector('marginalia-overlay')!.shadowRoot!
    const button = root.querySelector<HTMLButtonElement>('.annotate')!
    const t0 = performance.now()
    button.click()
    while (button.getAttribute('aria-pressed') !== 'true') await new Promise((r) => requestAnimationFrame(r))
    const picker = performance.now() - t0
    const chunk = await new Promise<number>((resolve) => {
      const seen = (): PerformanceResourceTiming | undefined =>
        (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((e) => e.name.includes('/chunks/extras-') && e.responseEnd >= t0)
      const done = (e: PerformanceResourceTiming) => resolve(e.responseEnd - t0)
      const now = seen()
      if (now) return done(now)
      new PerformanceObserver((list, observer) => {
        const e = (list.getEntries() as PerformanceResourceTiming[]).find((x) => x.name.includes('/chunks/extras-'))
        if (!e) return
        observer.disconnect()
        done(e)
      }).observe({ type: 'resource' })
    })
    return { picker, chunk }
  })
}

describe.skipIf(!enabled)('the overlay loads in parts', () => {
  it('before Annotate the page fetched overlay.js and the recorders alone, brotli-compressed within its budget; Annotate fetches the chunk and the annotation goes out with its screenshot; a second page takes the chunk from the cache', { timeout: 60_000 }, async () => {
    const { store, origin, tab, scripts, settled } = await setup('data-prefetch="false"')
    await open(tab, `${origin}/a`)
    // The early chunk is asked for as overlay.js starts: its response may come after the page's.
    await eventually(async () => (await settled()).length).toBe(2)
    const before = await settled()
    // The tag alone: the page log's and the steps' recorders come as the early chunk as overlay.js starts (the head snippet's loader.js brings them otherwise).
    expect(before.map((s) => s.path.replace(/-[^/]*$/, ''))).toEqual(['/overlay.js', '/chunks/early'])
    const core = before.find((s) => s.path === '/overlay.js')!
    expect(core.encoding).toBe('br')
    console.log(`overlay.js before Annotate: ${core.wire} bytes on the wire (headers and brotli body), budget ${CORE_WIRE_BUDGET}`)
    expect(core.wire).toBeGreaterThan(1_000)
    expect(core.wire).toBeLessThanOrEqual(CORE_WIRE_BUDGET)

    const cold = await annotateTimes(tab)
    await tab.locator('#buy').click()
    await tab.locator('marginalia-overlay .composer textarea').fill('Buy is hard to see')
    await tab.locator('marginalia-overlay .composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length).toBe(1)
    const [sent] = store.getAllPending()
    expect(sent!.comment).toBe('Buy is hard to see')
    expect(sent!.attachments?.some((a) => a.kind === 'screenshot')).toBe(true)
    const after = await settled()
    expect(after.find((s) => s.path.startsWith('/chunks/annotate-'))).toMatchObject({ status: 200, encoding: 'br' })
    const chunk = after.find((s) => s.path.startsWith('/chunks/extras-'))
    expect(chunk).toMatchObject({ status: 200, encoding: 'br' })
    const ui = after.find((s) => s.path.startsWith('/chunks/ui-'))
    expect(ui).toMatchObject({ status: 200, encoding: 'br' })
    console.log(`chunks/extras after Annotate: ${chunk!.wire} bytes on the wire (brotli); chunks/ui: ${ui!.wire}`)

    // Another page of the app: overlay.js is revalidated (304), the chunk is not asked for at all.
    scripts.clear()
    await open(tab, `${origin}/b`)
    const cached = await annotateTimes(tab)
    const second = await settled()
    expect(second.find((s) => s.path === '/overlay.js')).toMatchObject({ cached: true })
    const secondChunks = second.filter((s) => s.path.startsWith('/chunks/'))
    expect(secondChunks.map((s) => s.path.replace(/-[^/]*$/, ''))).toEqual(expect.arrayContaining(['/chunks/annotate', '/chunks/extras', '/chunks/ui']))
    expect(secondChunks.map((s) => s.path)).not.toContainEqual(expect.stringMatching(/^\/chunks\/prompts-/))
    for (const s of secondChunks) expect({ cached: s.cached, wire: s.wire }).toEqual({ cached: true, wire: 0 })
    console.log(`Annotate → picker ready: ${cold.picker.toFixed(1)} ms cold, ${cached.picker.toFixed(1)} ms cached; → chunk fetched: ${cold.chunk.toFixed(1)} ms cold, ${cached.chunk.toFixed(1)} ms cached`)
    expect(cold.picker).toBeLessThan(1_000)
  })

  it('data-prefetch="idle": fetches the chunks by itself once the page has loaded and the browser is idle', { timeout: 30_000 }, async () => {
    const { origin, tab, scripts } = await setup('data-prefetch="idle"')
    await open(tab, `${origin}/a`)
    for (const name of ['annotate', 'ui', 'extras']) await eventually(() => [...scripts.values()].some((s) => s.path.startsWith(`/chunks/${name}-`) && s.done), 10_000).toBe(true)
  })

  it('a browser that used annotate mode on this site fetches its chunks from its cache when a later page is idle, so the press finds them; another build\'s mark fetches nothing', { timeout: 60_000 }, async () => {
    const { origin, tab, scripts, settled } = await setup('')
    await open(tab, `${origin}/a`)
    await tab.locator('marginalia-overlay .bar').hover()
    await annotateTimes(tab)
    await tab.keyboard.press('Escape')
    expect(await tab.evaluate(() => localStorage.getItem('marginalia:chunks-used'))).toMatch(/^[0-9a-f]{12} http:\/\/127\.0\.0\.1:\d+\/$/)
    // The pointer away from where the toolbar will be: no intent on the next page.
    await tab.mouse.move(5, 300)

    scripts.clear()
    await open(tab, `${origin}/b`)
    for (const name of ['annotate', 'ui']) await eventually(() => [...scripts.values()].some((s) => s.path.startsWith(`/chunks/${name}-`) && s.done), 10_000).toBe(true)
    const idle = (await settled()).filter((s) => s.path.startsWith('/chunks/'))
    // What Annotate needs and the modules it shares, all from the browser's cache; not what Send needs.
    expect(idle.some((s) => s.path.startsWith('/chunks/extras-'))).toBe(false)
    for (const s of idle) expect({ path: s.path, cached: s.cached, wire: s.wire }).toEqual({ path: s.path, cached: true, wire: 0 })
    const picked = await annotateTimes(tab)
    // Nothing asked for twice: the press used what the idle moment fetched.
    const paths = (await settled()).map((s) => s.path)
    expect(paths.length).toBe(new Set(paths).size)
    console.log(`Annotate → picker ready on a later page, annotate mode fetched from the cache while idle: ${picked.picker.toFixed(1)} ms`)
    await tab.keyboard.press('Escape')

    // A mark another build left (its chunks are not the ones this overlay loads): nothing fetched.
    await tab.evaluate(() => localStorage.setItem('marginalia:chunks-used', `000000000000 ${localStorage.getItem('marginalia:chunks-used')!.split(' ')[1]}`))
    scripts.clear()
    await open(tab, `${origin}/a`)
    await tab.evaluate(() => new Promise((r) => requestIdleCallback(() => r(undefined), { timeout: 3_000 })))
    await tab.evaluate(() => new Promise((r) => setTimeout(r, 500)))
    expect((await settled()).filter((s) => s.path.startsWith('/chunks/') && !s.path.startsWith('/chunks/early-'))).toEqual([])
  })

  it('by default fetches nothing more at load; the pointer on the toolbar fetches annotate mode and its looks once, the press finds them there, and annotate mode fetches what Send needs', { timeout: 60_000 }, async () => {
    const { origin, tab, settled } = await setup('')
    await open(tab, `${origin}/a`)
    // Idle for a while after load: still overlay.js alone.
    await tab.evaluate(() => new Promise((r) => requestIdleCallback(() => r(undefined), { timeout: 3_000 })))
    expect((await settled()).map((s) => s.path.replace(/-[^/]*$/, ''))).toEqual(['/overlay.js', '/chunks/early'])
    await tab.locator('marginalia-overlay .bar').hover()
    await eventually(async () => (await settled()).filter((s) => s.path.startsWith('/chunks/')).map((s) => s.path.replace(/-[^/-]*$/, '')).sort()).toEqual(expect.arrayContaining(['/chunks/annotate', '/chunks/ui']))
    const intent = await settled()
    expect(intent.some((s) => s.path.startsWith('/chunks/extras-'))).toBe(false)
    const picked = await annotateTimes(tab)
    const after = await settled()
    // Each chunk asked for once: the press used what the hover fetched.
    const paths = after.map((s) => s.path)
    expect(paths.length).toBe(new Set(paths).size)
    expect(paths.some((p) => p.startsWith('/chunks/extras-'))).toBe(true)
    console.log(`Annotate → picker ready after the hover fetched annotate mode: ${picked.picker.toFixed(1)} ms`)
  })
})

describe.skipIf(!enabled)('the overlay at rest', () => {
  it('a page without pins pays nothing for its own DOM updates: no layout read and no timer of the overlay while the page changes', { timeout: 30_000 }, async () => {
    const { origin, tab } = await setup('data-prefetch="false"')
    // Count layout reads and timers from the first line of the page on.
    await tab.addInitScript(() => {
      const w = window as unknown as { overlayCost: Record<string, number> }
      w.overlayCost = { layout: 0, timers: 0 }
      const count = (key: string) => () => void (w.overlayCost[key]! += 1)
      for (const [proto, names] of [
        [Element.prototype, ['getBoundingClientRect', 'getClientRects']],
        [HTMLElement.prototype, ['offsetWidth', 'offsetHeight', 'offsetTop', 'offsetLeft']],
      ] as const) {
        for (const name of names) {
          const d = Object.getOwnPropertyDescriptor(proto, name)!
          const seen = count('layout')
          if (typeof d.value === 'function') {
            const original = d.value as (...a: unknown[]) => unknown
            Object.defineProperty(proto, name, { ...d, value: function (this: unknown, ...a: unknown[]) { seen(); return original.apply(this, a) } })
          } else if (d.get) {
            const get = d.get
            Object.defineProperty(proto, name, { ...d, get: function (this: unknown) { seen(); return get.call(this) } })
          }
        }
      }
      const computed = window.getComputedStyle
      window.getComputedStyle = (...a) => (count('layout')(), computed(...a))
      const timeout = window.setTimeout
      const interval = window.setInterval
      window.setTimeout = ((...a: Parameters<typeof setTimeout>) => (count('timers')(), timeout(...a))) as typeof setTimeout
      window.setInterval = ((...a: Parameters<typeof setInterval>) => (count('timers')(), interval(...a))) as typeof setInterval
    })
    await open(tab, `${origin}/a`)
    const cost = () => tab.evaluate(() => (window as unknown as { overlayCost: { layout: number; timers: number } }).overlayCost)
    // Settled: what mounting cost is behind us (two frames).
    await tab.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
    const before = await cost()
    // The app updates its DOM 30 times, a frame apart, as a ticking clock or a polled table does.
    await tab.evaluate(async () => {
      for (let i = 0; i < 30; i++) {
        const row = document.createElement('p')
        row.textContent = `tick ${i}`
        document.querySelector('main')!.append(row)
        await new Promise((r) => requestAnimationFrame(r))
      }
    })
    const after = await cost()
    expect({ layout: after.layout - before.layout, timers: after.timers - before.timers }).toEqual({ layout: 0, timers: 0 })
  })
})
