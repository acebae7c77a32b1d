/**
 * With the server down. A page the Vite plugin serves while no Marginalia server runs
 * (`start: false`) says so, with the command on the right port, and the overlay appears by
 * itself once the server is started. With the overlay up and the server gone, the alert, the
 * toast and the toolbar do not overlap, and the list of the page's annotations leaves "Retry now"
 * uncovered.
 */
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { testDir } from '../../helpers/store.js'
import { startVite } from '../../helpers/vite.js'
import { annotateMode, clickAt, pins, send, setup, ui } from '../overlay-anchor/setup.js'
import { freePort } from '../../helpers/ports.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

type Rect = { left: number; top: number; right: number; bottom: number }
const overlaps = (a: Rect, b: Rect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom

/** Boxes of overlay parts (null when not shown). */
function boxes(page: Page, selectors: string[]): Promise<(Rect | null)[]> {
  return page.evaluate((sels) => {
    const root = document.querySelector('marginalia-overlay')!.shadowRoot!
    return sels.map((s) => {
      const el = root.querySelector<HTMLElement>(s)
      if (!el || el.closest('[hidden]') || getComputedStyle(el).opacity === '0') return null
      const r = el.getBoundingClientRect()
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
    })
  }, selectors)
}

describe.skipIf(!enabled)('with the server down', () => {
  it('the Vite plugin\'s loader says the server is not running and how to start it on the right port, then loads the overlay once it runs', { timeout: 90_000 }, async () => {
    const port = await freePort()
    const { dir: root } = testDir(cleanups, 'marginalia-down-')
    writeFileSync(path.join(root, 'index.html'), '<!doctype html><html><head><title>App</title></head><body><h1>App</h1></body></html>')
    const logs: string[] = []
    const vite = await startVite(cleanups, root, [marginalia({ start: false, port })], { logs })
    // The terminal hint names the same port.
    expect(logs.join('\n')).toContain(`marginalia serve --port ${port} `)

    const { page } = await chromium.newPage()
    await page.goto(`http://127.0.0.1:${(vite.httpServer!.address() as AddressInfo).port}/`)
    const note = page.locator('[data-marginalia-loader][role="status"]')
    await eventually(() => note.locator('span').textContent()).toBe(`Marginalia server not running — start it with \`npx --no-install marginalia serve --port ${port}\``)
    expect(await page.locator('marginalia-overlay').count()).toBe(0)
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/server-not-running.png' })

    // The person starts it: the overlay comes up on its own, the note goes.
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port, log: () => {} })
    cleanups.push(() => http.close())
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 40_000 })
    expect(await note.count()).toBe(0)
    expect(await page.evaluate(() => window.Marginalia?.server)).toBe(http.url)
  })

  it('keeps the alert, the toast and the toolbar apart, and the list clear of "Retry now"', { timeout: 90_000 }, async () => {
    const page0 = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Down</title></head><body style="margin:0;padding:20px;font:16px sans-serif">
<button id="save" type="button">Save</button>{{overlay}}</body></html>`
    const { page, http } = await setup(chromium.browser, cleanups, { '/down': page0 }, '/down')
    // Annotate mode fetched before the server goes: its chunk comes when the person first reaches for it.
    await annotateMode(page)
    await page.keyboard.press('Escape')
    await http.close()
    await eventually(() => ui(page, '.agent').textContent()).toBe('Server unreachable')
    // "Retry now" that fails again leaves the alert's words as they are: they are not put in again
    // (new elements lay out and repaint the whole page).
    await ui(page, '.alert .btn').waitFor()
    await page.evaluate(() => {
      const alert = document.querySelector('marginalia-overlay')!.shadowRoot!.querySelector('.alert')!
      const w = window as unknown as { __alertRebuilt: number }
      w.__alertRebuilt = 0
      new MutationObserver((list) => void (w.__alertRebuilt += list.filter((m) => m.type === 'childList').length)).observe(alert, { childList: true, subtree: true })
    })
    for (let i = 0; i < 2; i++) {
      const failed = page.waitForEvent('requestfailed', (r) => r.url().startsWith(http.url))
      await ui(page, '.alert .btn').click()
      await failed
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    }
    expect(await page.evaluate(() => (window as unknown as { __alertRebuilt: number }).__alertRebuilt)).toBe(0)
    // An annotation kept while down: a toast says so, under the alert.
    await annotateMode(page)
    await clickAt(page, await page.locator('#save').boundingBox())
    await send(page, 'Kept while down')
    await eventually(() => ui(page, '.alert').textContent()).toContain('1 annotation is kept')
    await eventually(async () => (await boxes(page, ['.toast']))[0] !== null).toBe(true)
    const [alert, toast, bar] = await boxes(page, ['.alert', '.toast', '.bar'])
    expect(alert && toast && bar).toBeTruthy()
    expect([overlaps(alert!, toast!), overlaps(alert!, bar!), overlaps(toast!, bar!)]).toEqual([false, false, false])

    // The kept annotation has its pin already, where the person clicked, with no number yet (the
    // server gives it one) and saying it is not sent; it opens the list, where it waits.
    const save = await page.locator('#save').boundingBox()
    await eventually(async () => (await pins(page)).map((p) => [p.n, p.hidden, p.anchor, Math.abs(p.x - (save!.x + save!.width / 2)) <= 1 && Math.abs(p.y - (save!.y + save!.height / 2)) <= 1])).toEqual([['…', false, 'found', true]])
    expect(await ui(page, '.pin').getAttribute('aria-label')).toBe('Annotation, not sent yet (kept in this browser): Kept while down')
    expect(await ui(page, '.pin').getAttribute('data-waiting')).toBe('')
    // The list opens above the dock: "Retry now" stays uncovered and clickable.
    await ui(page, '.pin').click()
    await ui(page, '.list-panel').waitFor()
    await eventually(async () => {
      const [list, retry] = await boxes(page, ['.list-panel', '.alert .btn'])
      return !!list && !!retry && !overlaps(list, retry)
    }).toBe(true)
    // What waits is listed; the list does not also say the page has nothing.
    expect(await ui(page, '.list-panel .outbox-item .line').textContent()).toBe('Kept while down')
    expect(await ui(page, '.list-panel .empty').count()).toBe(0)
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/server-down-list.png' })
    const hit = await page.evaluate(() => {
      const root = document.querySelector('marginalia-overlay')!.shadowRoot!
      const btn = root.querySelector('.alert .btn')!
      const r = btn.getBoundingClientRect()
      return root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === btn
    })
    expect(hit).toBe(true)
  })
})
