/**
 * The toolbar's settings: the theme follows prefers-color-scheme, a setting forces
 * light or dark (remembered), and the composer's screenshot and page-log toggles take their
 * defaults from the menu.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateMode, clickAt, openPage, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body style="margin:0;padding:40px;font:14px sans-serif"><button id="buy">Buy</button>{{overlay}}</body></html>`

const theme = (page: Page) => ui(page, '.mg').getAttribute('data-theme')
/** The menu's background as the person sees it: its red channel (0 dark … 255 white). */
const menuRed = (page: Page) => ui(page, '.menu').evaluate((el) => Number(/\d+/.exec(getComputedStyle(el).backgroundColor)![0]))

describe.skipIf(!enabled)('settings menu', () => {
  it('follows prefers-color-scheme, remembers a forced theme, and sets the capture defaults', { timeout: 90_000 }, async () => {
    const { pages, page } = await setup(chromium.browser, cleanups, { '/shop': PAGE }, '/shop')
    expect(await theme(page)).toBe('light')
    await page.emulateMedia({ colorScheme: 'dark' })
    await eventually(() => theme(page)).toBe('dark')
    await ui(page, '.settings-btn').click()
    expect(await menuRed(page)).toBeLessThan(60)
    await page.screenshot({ path: 'test/browser/overlay-ui/.screenshots/dark.png' })

    // Light, although the system says dark; remembered across a reload.
    await ui(page, '.menu input[name="mg-theme"][value="light"]').check({ force: true })
    expect(await theme(page)).toBe('light')
    expect(await menuRed(page)).toBeGreaterThan(200)
    await openPage(page, `${pages.origin}/shop`)
    expect(await theme(page)).toBe('light')
    await ui(page, '.settings-btn').click()
    await ui(page, '.menu input[name="mg-theme"][value="auto"]').check({ force: true })
    expect(await theme(page)).toBe('dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await eventually(() => theme(page)).toBe('light')

    // Capture defaults: screenshot off, page log off → a new composer starts with both off.
    await ui(page, '.menu input[name="screenshot-default"]').uncheck()
    await ui(page, '.menu input[name="page-log-default"]').uncheck()
    await page.keyboard.press('Escape')
    await annotateMode(page)
    await clickAt(page, await page.locator('#buy').boundingBox())
    expect(await ui(page, '.composer input[name="screenshot"]').isChecked()).toBe(false)
    expect(await ui(page, '.composer input[name="page-log"]').isChecked()).toBe(false)
  })
})
