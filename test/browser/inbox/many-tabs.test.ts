/**
 * Many inbox tabs open at once, in one browser: a browser keeps at most six HTTP/1.1 connections
 * to one server, shared by its tabs, so the inbox's tabs share one live connection (the tab that
 * holds it tells the others what it reads). Every tab is live and still reaches the server; when
 * that tab closes, another takes the connection over from where it was.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
const TABS = 8

describe.skipIf(!enabled)('many inbox tabs', () => {
  it(`${TABS} tabs: one live connection for all, every tab live and reaching the server; an annotation added shows in each; closing the tab that holds the connection hands it on`, { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/checkout', name: 'Checkout' })
    const http = await startHttpServer(store, { port: 0, log: () => {} })
    cleanups.push(() => http.close())
    const { context, page: first } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    const streams: string[] = []
    context.on('request', (r) => {
      const url = new URL(r.url())
      if (r.url().startsWith(http.url) && url.pathname.endsWith('/events')) streams.push(url.pathname + url.search)
    })
    const tabs = [first]
    for (let i = 1; i < TABS; i++) tabs.push(await context.newPage())
    for (const tab of tabs) {
      await tab.goto(`${http.url}/`)
      await tab.locator('#live[data-state="live"]').waitFor({ timeout: 15_000 })
    }
    expect(streams).toHaveLength(1)
    expect(streams[0]).toMatch(/^\/api\/events\?permissions=1&lastEventId=\d+$/)

    // Each tab can still ask the server something (with a connection each, the seventh could not).
    for (const tab of tabs) {
      const answered = await tab.evaluate(async () => {
        const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('stalled'), 5_000))
        return Promise.race([fetch('/health').then((r) => String(r.status)), timeout])
      })
      expect(answered).toBe('200')
    }

    // An annotation added now shows live in every tab.
    const card = (tab: Page, id: string) => tab.locator(`article.card[data-id="${id}"]`)
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'The total ignores the coupon', element: { selector: '#total' } })
    for (const tab of tabs) await eventually(() => card(tab, a.id).count(), 15_000).toBe(1)

    // The tab holding the connection closes: another takes it over from the newest rev heard, and
    // what the agent does next reaches the tabs left.
    const heard = store.rev
    await first.close()
    await eventually(() => streams.length, 15_000).toBe(2)
    expect(streams[1]).toBe(`/api/events?permissions=1&lastEventId=${heard}`)
    await store.acknowledge(a.id)
    for (const tab of [tabs[1]!, tabs.at(-1)!]) await eventually(() => card(tab, a.id).locator('.chip').textContent(), 15_000).toBe('Acknowledged')
  })
})
