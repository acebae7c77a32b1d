/**
 * Many tabs of the app open at once, in one browser: a browser keeps at most six HTTP/1.1
 * connections to one server, shared by every tab of the app, so the tabs share one live
 * connection (the tab that holds it tells the others what it reads) and every tab still reaches
 * the server. When that tab closes, another takes the connection over, from where it was.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
const TABS = 8

describe.skipIf(!enabled)('many tabs of the app', () => {
  it(`${TABS} tabs: one live connection for all, each overlay connected, every tab reaches the server; an annotation sent from the last is live in the first; closing the tab that holds the connection hands it on`, { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { http } = await startMarginalia(cleanups, {}, store)
    const pages = await servePages({ '/': `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><p id="total">Total: $40</p><script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>` }, cleanups)
    const { context, page: first } = await chromium.newPage()
    const streams: string[] = []
    context.on('request', (r) => void (r.url().startsWith(http.url) && new URL(r.url()).pathname.endsWith('/events') && streams.push(new URL(r.url()).pathname + new URL(r.url()).search)))
    const tabs = [first]
    for (let i = 1; i < TABS; i++) tabs.push(await context.newPage())
    const connected = (tab: Page) => tab.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
    for (const [i, tab] of tabs.entries()) {
      await tab.goto(`${pages.origin}/?tab=${i + 1}`)
      await connected(tab)
    }
    expect(streams).toEqual(['/api/events?permissions=1&lastEventId=0'])

    // Each tab can still ask the server something (with a connection each, the seventh could not).
    for (const tab of tabs) {
      const answered = await tab.evaluate(async (url) => {
        const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('stalled'), 5_000))
        return Promise.race([fetch(`${url}/health`).then((r) => String(r.status)), timeout])
      }, http.url)
      expect(answered).toBe('200')
    }

    // The last tab annotates; the first, on the same page, shows it live.
    const last = tabs.at(-1)!
    const ui = (tab: Page, sel: string) => tab.locator(`marginalia-overlay ${sel}`)
    await ui(last, '.annotate').click()
    await last.locator('#total').click()
    await ui(last, '.composer textarea').fill('The total ignores the coupon')
    await ui(last, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().map((a) => a.comment), 15_000).toEqual(['The total ignores the coupon'])
    await eventually(() => ui(first, '.pin').count(), 15_000).toBe(1)

    // The tab holding the connection closes: another takes it over from the newest rev heard, and
    // what the agent does next reaches the tabs left.
    const heard = store.rev
    await first.close()
    await eventually(() => streams.length, 15_000).toBe(2)
    expect(streams[1]).toBe(`/api/events?permissions=1&lastEventId=${heard}`)
    await store.acknowledge(store.getAllPending()[0]!.id)
    for (const tab of [tabs[1]!, last]) await eventually(() => ui(tab, '.pin').getAttribute('data-status'), 15_000).toBe('acknowledged')
  })
})
