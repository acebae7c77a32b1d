/**
 * Pins on the page: where the person clicked, neighbours never overlapping, hidden
 * while their element is scrolled out of its scroll container or under a sticky header,
 * following a layout shift within two animation frames, and gone at once on client-side
 * navigation (pushState), back on popstate.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateMode, clickAt, frames, pins, send, setup, type PinState } from './setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const rows = Array.from({ length: 30 }, (_, i) => `<div class="row" style="height:40px;border-bottom:1px solid #eee">Row ${i + 1}</div>`).join('')
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Layout</title></head><body style="margin:0;font:16px sans-serif">
<header style="position:sticky;top:0;height:60px;background:#1e293b;color:#fff;z-index:5;padding:0 20px">Sticky header</header>
<div id="banner-slot"></div>
<div class="pair" style="padding:20px"><button class="a" style="width:60px;height:30px">A</button><button class="b" style="width:60px;height:30px">B</button></div>
<p style="height:120px;margin:0;padding:0 20px">Intro text.</p>
<div id="scroller" style="height:200px;overflow:auto;width:400px;margin-left:20px;border:1px solid #999">${rows}</div>
<div style="height:2000px"></div>
{{overlay}}</body></html>`

const row3 = (page: Page) => page.locator('.row', { hasText: /^Row 3$/ })

async function pin(page: Page, n: string): Promise<PinState> {
  const found = (await pins(page)).find((p) => p.n === n)
  if (!found) throw new Error(`no pin ${n}`)
  return found
}

async function onRow3(page: Page): Promise<boolean> {
  const p = await pin(page, '1')
  const box = await row3(page).boundingBox()
  return !p.hidden && !!box && p.x >= box.x && p.x <= box.x + box.width && p.y >= box.y && p.y <= box.y + box.height
}

describe.skipIf(!enabled)('pins on the page', () => {
  it('sit where the person clicked, never overlap, hide when clipped or covered, follow shifts and navigation at once', { timeout: 120_000 }, async () => {
    const { store, page, pages } = await setup(chromium.browser, cleanups, { '/layout': PAGE, '/elsewhere': PAGE }, '/layout')
    await annotateMode(page)
    const rowBox = await row3(page).boundingBox()
    await clickAt(page, rowBox, 0.7, 0.5)
    await send(page, 'Row 3 is wrong')
    await eventually(() => store.getAllPending().length).toBe(1)
    // Where the person clicked: 70 % across, half-way down.
    await eventually(async () => {
      const p = await pin(page, '1')
      return Math.abs(p.x - (rowBox!.x + rowBox!.width * 0.7)) <= 1 && Math.abs(p.y - (rowBox!.y + rowBox!.height / 2)) <= 1
    }).toBe(true)

    // Two neighbours clicked close to their shared edge: their pins do not overlap. (B is clicked
    // low on its left edge: pin 2, just up and right of where A was clicked, covers the middle.)
    await annotateMode(page)
    await clickAt(page, await page.locator('.a').boundingBox(), 0.95, 0.5)
    await send(page, 'A')
    await annotateMode(page)
    await clickAt(page, await page.locator('.b').boundingBox(), 0.1, 0.95)
    await send(page, 'B')
    await eventually(() => store.getAllPending().length).toBe(3)
    await eventually(async () => (await pins(page)).filter((p) => !p.hidden).length).toBe(3)
    const [a, b] = [await pin(page, '2'), await pin(page, '3')]
    expect(Math.abs(a.x - b.x) >= 26 || Math.abs(a.y - b.y) >= 26).toBe(true)
    await page.screenshot({ path: 'test/browser/overlay-anchor/.screenshots/pins-layout.png' })

    // Row 3 scrolled out of its container (still inside the window): its pin hides, at once.
    await page.evaluate(() => (document.getElementById('scroller')!.scrollTop = 130))
    await frames(page)
    const clipped = await row3(page).boundingBox()
    expect(clipped!.y + clipped!.height).toBeGreaterThan(0)
    expect((await pin(page, '1')).hidden).toBe(true)
    await page.evaluate(() => (document.getElementById('scroller')!.scrollTop = 0))
    await frames(page)
    expect(await onRow3(page)).toBe(true)

    // Under the sticky header: hidden; and back.
    const top = (await row3(page).boundingBox())!.y
    await page.evaluate((y) => window.scrollTo(0, y), top - 30)
    await frames(page)
    expect((await row3(page).boundingBox())!.y).toBeGreaterThan(0)
    expect((await pin(page, '1')).hidden).toBe(true)
    await page.evaluate(() => window.scrollTo(0, 0))
    await frames(page)
    expect(await onRow3(page)).toBe(true)

    // A banner pushes everything down: the pin follows within two frames.
    await page.evaluate(async () => {
      const banner = document.createElement('div')
      banner.style.height = '100px'
      banner.textContent = 'Cookie banner'
      document.getElementById('banner-slot')!.append(banner)
      await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())))
    })
    expect(await onRow3(page)).toBe(true)

    // Client-side navigation: the old page's pins are gone two frames later; back, they return.
    await page.evaluate(async () => {
      history.pushState({}, '', '/elsewhere')
      await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())))
    })
    expect((await pins(page)).filter((p) => !p.hidden)).toEqual([])
    expect(page.url()).toBe(`${pages.origin}/elsewhere`)
    await page.evaluate(() => history.back())
    await eventually(async () => (await pins(page)).filter((p) => !p.hidden).length).toBe(3)
  })
})
