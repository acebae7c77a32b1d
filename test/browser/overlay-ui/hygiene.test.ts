/**
 * Pin hygiene: forty finished annotations must not bury a page. Resolved and dismissed
 * pins are hidden by default; the settings menu's toggle shows them (remembered); Alt+Shift+P
 * hides and shows every pin; collapsing the toolbar hides the pins.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { openPage, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const GRID = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Grid</title>
<style>body{margin:0;padding:40px 20px;font:14px sans-serif}#grid{display:grid;grid-template-columns:repeat(6,130px);gap:12px}.cell{height:60px;border:1px solid #999;padding:4px}</style></head>
<body><div id="grid">${Array.from({ length: 42 }, (_, i) => `<div class="cell" id="cell-${i}">Cell ${i}</div>`).join('')}</div><input id="search" placeholder="Search"> {{overlay}}</body></html>`

/** Pins a person sees: rendered, not hidden, inside a shown container. */
const visiblePins = (page: Page) => ui(page, '.pin').filter({ visible: true }).count()

describe.skipIf(!enabled)('pin hygiene', () => {
  it('shows only open work: 40 resolved + 2 pending → 2 pins; the toggle shows 42; a key and collapsing hide them', { timeout: 90_000 }, async () => {
    const { store, pages, page } = await setup(chromium.browser, cleanups, { '/grid': GRID }, '/grid', { width: 1024, height: 800 })
    const session = await store.createSession({ url: `${pages.origin}/grid` })
    for (let i = 0; i < 42; i++) {
      const a = await store.addAnnotation({ sessionId: session.id, comment: `Cell ${i} is off`, element: { selector: `#cell-${i}` } })
      if (i === 7 || i === 30) continue
      if (i % 2 === 0) await store.resolve(a.id, { summary: 'Fixed' })
      else await store.dismiss(a.id, { reason: 'Works as designed' })
    }
    await openPage(page, `${pages.origin}/grid`)
    await eventually(() => ui(page, '.count').textContent()).toBe('42')
    await eventually(() => visiblePins(page)).toBe(2)
    // Numbers stay those of the page's list: the two open ones are #8 and #31.
    expect(await ui(page, '.pin').allTextContents()).toEqual(['8', '31'])

    await ui(page, '.settings-btn').click()
    await ui(page, '.menu input[name="show-resolved"]').check()
    await eventually(() => visiblePins(page)).toBe(42)
    await page.screenshot({ path: 'test/browser/overlay-ui/.screenshots/hygiene-all.png' })
    // Remembered in this browser.
    await openPage(page, `${pages.origin}/grid`)
    await eventually(() => visiblePins(page)).toBe(42)
    await ui(page, '.settings-btn').click()
    await ui(page, '.menu input[name="show-resolved"]').uncheck()
    await eventually(() => visiblePins(page)).toBe(2)
    await page.keyboard.press('Escape')
    expect(await ui(page, '.menu').isVisible()).toBe(false)

    // The key hides every pin, and shows them again; never while the person types.
    await page.locator('#grid').click()
    await page.keyboard.press('Alt+Shift+P')
    await eventually(() => visiblePins(page)).toBe(0)
    await page.locator('#search').focus()
    await page.keyboard.press('Alt+Shift+P')
    expect(await visiblePins(page)).toBe(0)
    await page.locator('#grid').click()
    await page.keyboard.press('Alt+Shift+P')
    await eventually(() => visiblePins(page)).toBe(2)

    // Collapsing the toolbar hides the pins; opening it shows them.
    await ui(page, '.brand').click()
    await eventually(() => visiblePins(page)).toBe(0)
    await ui(page, '.brand').click()
    await eventually(() => visiblePins(page)).toBe(2)

    // An open thread of a resolved annotation shows its pin (from the list).
    await ui(page, '.count').click()
    await ui(page, '.list-panel .item').first().click()
    await eventually(() => ui(page, '.thread .panel-title').textContent()).toBe('Annotation #1')
    await eventually(() => visiblePins(page)).toBe(3)
  })
})
