/**
 * Many tabs of the app open at once, in one browser: a browser keeps at most six HTTP/1.1
 * connections to one server, shared by every tab of the app, so each tab's overlay holds one live
 * connection (its page stream, which carries the agent's permission requests too) and every tab
 * still reaches the server — its own requests, and the app's.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
const TABS = 5

describe.skipIf(!enabled)('many tabs of the app', () => {
  it(`${TABS} tabs: each overlay connected with one live connection, every tab still reaches the server, an annotation made in the last one is stored`, { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { http } = await startMarginalia(cleanups, {}, store)
    const pages = await servePages({ '/': `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><p id="total">Total: $40</p><script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>` }, cleanups)
    const { context, page: first } = await chromium.newPage()
    const streams: string[] = []
    context.on('request', (r) => void (r.url().startsWith(http.url) && new URL(r.url()).pathname.endsWith('/events') && streams.push(r.url())))
    const tabs = [first]
    for (let i = 1; i < TABS; i++) tabs.push(await context.newPage())
    for (const [i, tab] of tabs.entries()) {
      await tab.goto(`${pages.origin}/?tab=${i + 1}`)
      await tab.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
    }
    expect(streams).toHaveLength(TABS)

    // Each tab can still ask the server something (with two connections a tab, the third tab's could not).
    for (const tab of tabs) {
      const answered = await tab.evaluate(async (url) => {
        const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('stalled'), 5_000))
        return Promise.race([fetch(`${url}/health`).then((r) => String(r.status)), timeout])
      }, http.url)
      expect(answered).toBe('200')
    }

    // The last tab annotates: its requests are not stuck behind the other tabs' streams, and the
    // first tab, on the same page, shows the annotation live.
    const last = tabs.at(-1)!
    const ui = (sel: string) => last.locator(`marginalia-overlay ${sel}`)
    await ui('.annotate').click()
    await last.locator('#total').click()
    await ui('.composer textarea').fill('The total ignores the coupon')
    await ui('.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().map((a) => a.comment), 15_000).toEqual(['The total ignores the coupon'])
    // The first tab shows it live (its own stream; the page is the same, so is its session).
    await eventually(() => first.locator('marginalia-overlay .pin').count(), 15_000).toBe(1)
  })
})
