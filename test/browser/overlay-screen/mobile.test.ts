/**
 * On a phone: a 375×667 touch viewport showing a page slightly wider than the phone.
 * The toolbar is on screen (placed against the visual viewport, not the wider layout viewport),
 * hints say "tap" and name no keys, an element is annotated by tapping, and the comment box does
 * not cover what it is about.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { phonePage, servePages, startMarginalia } from '../../helpers/page.js'
import { ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/** The orders page, before the overlay's script tag. */
const ORDERS = `<header style="padding:12px 16px;background:#0f172a;color:#fff">Orders</header>
<table style="width:440px;border-collapse:collapse;margin:12px 0"><tr><td style="padding:8px">Order #4790</td><td style="padding:8px">Refund approved</td><td style="padding:8px">€12.00</td></tr></table>
<p style="padding:0 16px;height:180px">A table a little wider than the phone.</p>
<button id="refund" type="button" style="margin:0 16px;padding:10px 16px">Refund order</button>
<div style="height:900px"></div>
<script>window.pageClicks = 0; document.getElementById('refund').addEventListener('click', () => window.pageClicks++)</script>
`
const page = (overlay: string) => phonePage('Orders', 'margin:0;font:16px sans-serif', ORDERS + overlay)

type Rect = { left: number; top: number; right: number; bottom: number }

/** The visual viewport and an overlay part's box, in the same (layout viewport) coordinates. */
function measure(p: Page, selector: string): Promise<{ screen: Rect; box: Rect }> {
  return p.evaluate((sel) => {
    const vv = window.visualViewport!
    const r = document.querySelector('marginalia-overlay')!.shadowRoot!.querySelector(sel)!.getBoundingClientRect()
    return {
      screen: { left: vv.offsetLeft, top: vv.offsetTop, right: vv.offsetLeft + vv.width, bottom: vv.offsetTop + vv.height },
      box: { left: r.left, top: r.top, right: r.right, bottom: r.bottom },
    }
  }, selector)
}

const inside = ({ screen, box }: { screen: Rect; box: Rect }) => box.left >= screen.left - 0.5 && box.right <= screen.right + 0.5 && box.top >= screen.top - 0.5 && box.bottom <= screen.bottom + 0.5
const overlaps = (a: Rect, b: Rect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom

describe.skipIf(!enabled)('the overlay on a phone', () => {
  it('keeps the toolbar on screen, says "tap", annotates by tapping, and the box does not cover its element', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const pages = await servePages({ '/orders': page(`<script src="${http.url}/overlay.js" defer></script>`) }, cleanups)
    const { page: p } = await chromium.newPage({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 })
    await p.goto(`${pages.origin}/orders`)
    await p.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 20_000 })
    // The page is wider than the phone: the layout viewport is wider than what is on screen.
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeGreaterThan(375)
    expect(await p.evaluate(() => matchMedia('(pointer: coarse)').matches)).toBe(true)

    await eventually(async () => inside(await measure(p, '.bar'))).toBe(true)
    await p.screenshot({ path: 'test/browser/overlay-screen/.screenshots/phone-toolbar.png' })
    // Scrolled sideways to the table's end, and zoomed in: still on screen, still its size.
    await p.evaluate(() => window.scrollTo(200, 0))
    await eventually(async () => inside(await measure(p, '.bar'))).toBe(true)
    await p.evaluate(() => window.scrollTo(0, 0))

    // Tap Annotate, tap the button: the page never sees the tap, the box opens without key hints.
    await ui(p, '.annotate').tap()
    await eventually(() => ui(p, '.toast').textContent()).toContain('Tap an element')
    await p.locator('#refund').tap()
    await ui(p, '.composer textarea').waitFor()
    expect(await p.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(0)
    expect(await ui(p, '.composer .panel-foot .hint').isVisible()).toBe(false)
    const composer = await measure(p, '.composer')
    expect(inside(composer)).toBe(true)
    const target = await p.locator('#refund').evaluate((el) => {
      const r = el.getBoundingClientRect()
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
    })
    expect(overlaps(composer.box, target)).toBe(false)
    await p.screenshot({ path: 'test/browser/overlay-screen/.screenshots/phone-composer.png' })

    await ui(p, '.composer textarea').fill('Say when the money arrives')
    await ui(p, '.composer button[type="submit"]').tap()
    await eventually(() => store.getAllPending().map((a) => [a.comment, a.element?.selector])).toEqual([['Say when the money arrives', '#refund']])
  })
})
