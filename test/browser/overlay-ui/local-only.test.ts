/**
 * Local by promise: during a whole session — the overlay loads, a screenshot and the
 * page log go with an annotation, a reply, Copy as Markdown, the inbox opens and searches — the
 * browser asks nothing of any host but the Marginalia server and the page's own origin: no
 * telemetry, no version ping, no CDN font or script.
 */
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { annotateMode, clickAt, openPage, send, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title><link rel="stylesheet" href="/app.css"></head>
<body><h1>Shop</h1><img src="/logo.svg" alt="Logo" width="40" height="40"><button id="buy">Buy</button>
<script>fetch('/api/cart').catch(() => {})</script>{{overlay}}</body></html>`

describe.skipIf(!enabled)('local by promise', () => {
  it('overlay and inbox request nothing but the Marginalia server and the page’s origin', { timeout: 120_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const pages = await servePages({
      '/shop': PAGE.replace('{{overlay}}', `<script src="${http.url}/overlay.js" data-screenshot-budget="10000" defer></script>`),
      '/app.css': 'body{font:14px sans-serif;padding:40px}',
      '/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5"/></svg>',
      '/api/cart': '{"items":[]}',
    }, cleanups)
    const context = await chromium.browser.newContext({ viewport: { width: 1024, height: 700 } })
    cleanups.push(() => context.close())
    // Every request of every page of the context, from the first one on.
    const requests: string[] = []
    context.on('request', (r) => requests.push(r.url()))
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pages.origin })
    const page = await context.newPage()
    await openPage(page, `${pages.origin}/shop`)

    // An annotation with a screenshot and the page log (both on by default), then a reply and a copy.
    await annotateMode(page)
    await clickAt(page, await page.locator('#buy').boundingBox())
    expect(await ui(page, '.composer input[name="screenshot"]').isChecked()).toBe(true)
    await send(page, 'Buy button needs a price')
    await eventually(() => store.getAllPending().length).toBe(1)
    await eventually(() => store.getAllPending()[0]!.attachments?.length ?? 0).toBe(1)
    await page.keyboard.press('Escape')
    await ui(page, '.pin').click()
    await ui(page, '.thread .reply-form textarea').fill('The price is in the cart API.')
    await ui(page, '.thread .reply-form button[type="submit"]').click()
    await eventually(() => store.getAllPending()[0]!.replies.length).toBe(1)
    await ui(page, '.thread .copy-md').click()
    await eventually(() => ui(page, '.toast').textContent()).toContain('as Markdown')

    // The inbox: loads, lists, searches.
    const inbox = await context.newPage()
    await inbox.goto(`${http.url}/`)
    await eventually(() => inbox.getByText('Buy button needs a price').count()).toBeGreaterThan(0)
    await inbox.locator('#toolbar input').first().fill('price')
    await eventually(() => requests.some((u) => u.startsWith(`${http.url}/api/`) && u.includes('price'))).toBe(true)

    const allowed = new Set([new URL(http.url).origin, pages.origin])
    const foreign = requests.filter((u) => !/^(data|blob|about):/.test(u) && !allowed.has(new URL(u).origin))
    expect(requests.length).toBeGreaterThan(8)
    expect(requests.some((u) => u.startsWith(`${http.url}/api/attachments`))).toBe(true)
    expect(foreign).toEqual([])
  })
})
