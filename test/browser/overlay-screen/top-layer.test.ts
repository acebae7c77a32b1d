/**
 * Always on top: the overlay sits in the browser's top layer — above page furniture at
 * `z-index: 2147483647`, above a popover the page opens later, and usable while a modal
 * `<dialog>` (showModal: the rest of the page inert) is open: the toolbar is hit-testable, an
 * element in the dialog can be annotated and the comment typed, Esc closes the box and not the
 * dialog.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dialog</title></head><body style="margin:0;font:16px sans-serif">
<div id="banner" style="position:fixed;left:0;right:0;bottom:0;height:160px;z-index:2147483647;background:rgba(220,38,38,.85);color:#fff;padding:12px">Cookie banner at z-index 2147483647</div>
<main style="padding:20px"><h1>Orders</h1><button id="open" type="button">Edit order</button></main>
<dialog id="edit" style="width:420px"><h2>Edit order</h2><label>Quantity <input id="qty" value="1"></label>
<button id="save" type="button">Save changes</button></dialog>
<div id="pop" popover style="position:fixed;inset:auto 0 0 auto;width:420px;height:140px;margin:0;background:#fef3c7">A page popover over the corner</div>
<script>
  window.pageClicks = 0
  document.getElementById('save').addEventListener('click', () => { window.pageClicks++ })
</script>
{{overlay}}</body></html>`

/** What the page's own hit test finds at the middle of an overlay part: the overlay's host, or a page element. */
async function hitAt(page: Page, selector: string): Promise<string> {
  return page.evaluate((sel) => {
    const host = document.querySelector('marginalia-overlay')!
    const el = host.shadowRoot!.querySelector(sel)!
    const r = el.getBoundingClientRect()
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)
    return hit === host ? 'overlay' : `${hit?.localName ?? 'nothing'}${hit?.id ? `#${hit.id}` : ''}`
  }, selector)
}

async function clickCentre(page: Page, selector: string): Promise<void> {
  const box = await ui(page, selector).boundingBox()
  if (!box) throw new Error(`no box for ${selector}`)
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
}

describe.skipIf(!enabled)('the overlay is always on top', () => {
  it('a modal dialog already open when the overlay starts: the toolbar goes into it and is usable', { timeout: 60_000 }, async () => {
    const opened = PAGE.replace('{{overlay}}', "<script>document.getElementById('edit').showModal()</script>{{overlay}}")
    const { page } = await setup(chromium.browser, cleanups, { '/orders': opened }, '/orders')
    await eventually(() => page.evaluate(() => document.querySelector('marginalia-overlay')!.parentElement?.id)).toBe('edit')
    expect(await hitAt(page, '.annotate')).toBe('overlay')
    await clickCentre(page, '.annotate')
    await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
  })

  it('above a max z-index banner, a later popover and a modal dialog, and usable inside the dialog', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    // The banner covers the toolbar's corner at the highest z-index there is: the toolbar still wins.
    expect(await hitAt(page, '.bar')).toBe('overlay')
    expect(await hitAt(page, '.annotate')).toBe('overlay')

    // A popover the page opens later enters the top layer after the overlay: the overlay goes on top again.
    await page.evaluate(() => document.getElementById('pop')!.showPopover())
    await eventually(() => hitAt(page, '.annotate')).toBe('overlay')
    await page.evaluate(() => document.getElementById('pop')!.hidePopover())

    // A modal dialog: the rest of the page is inert, the overlay is not.
    await page.evaluate(() => (document.getElementById('edit') as HTMLDialogElement).showModal())
    await eventually(() => hitAt(page, '.annotate')).toBe('overlay')
    expect(await page.evaluate(() => document.querySelector('marginalia-overlay')!.parentElement?.id)).toBe('edit')
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/dialog-toolbar.png' })

    // Annotate the dialog's button: the click never reaches the page, the box opens and takes typing.
    await clickCentre(page, '.annotate')
    // Annotate mode's chunk comes on this first press.
    await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
    const save = await page.locator('#save').boundingBox()
    await page.mouse.move(save!.x + save!.width / 2, save!.y + save!.height / 2)
    await page.mouse.click(save!.x + save!.width / 2, save!.y + save!.height / 2)
    await ui(page, '.composer textarea').waitFor()
    expect(await hitAt(page, '.composer textarea')).toBe('overlay')
    await clickCentre(page, '.composer textarea')
    await page.keyboard.type('Save should say Update order')
    expect(await ui(page, '.composer textarea').inputValue()).toBe('Save should say Update order')
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/dialog-composer.png' })

    // Esc closes the box (twice: the first asks before discarding the text), never the page's dialog.
    await page.keyboard.press('Escape')
    await eventually(() => ui(page, '.composer .error').textContent()).toContain('Esc again')
    expect(await page.evaluate(() => (document.getElementById('edit') as HTMLDialogElement).open)).toBe(true)
    await page.keyboard.press('Escape')
    await eventually(() => ui(page, '.composer').isVisible()).toBe(false)
    expect(await page.evaluate(() => (document.getElementById('edit') as HTMLDialogElement).open)).toBe(true)

    // Again, and this time sent with the button (typed keys reach the box, not the dialog's input).
    await ui(page, '.annotate').getAttribute('aria-pressed').then(async (p) => (p === 'true' ? undefined : clickCentre(page, '.annotate')))
    await page.mouse.click(save!.x + save!.width / 2, save!.y + save!.height / 2)
    await ui(page, '.composer textarea').waitFor()
    await clickCentre(page, '.composer textarea')
    await page.keyboard.type('Save should say Update order')
    await clickCentre(page, '.composer button[type="submit"]')
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Save should say Update order'])
    expect(store.getAllPending()[0]!.element?.selector).toContain('save')
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(0)
    expect(await page.locator('#qty').inputValue()).toBe('1')

    // The dialog closes: the overlay goes back to the root, still on top of the banner.
    await page.evaluate(() => (document.getElementById('edit') as HTMLDialogElement).close())
    await eventually(() => page.evaluate(() => document.querySelector('marginalia-overlay')!.parentElement === document.documentElement)).toBe(true)
    expect(await hitAt(page, '.annotate')).toBe('overlay')
    // The page removes an open dialog the overlay was in: the overlay comes back to the root.
    await page.evaluate(() => (document.getElementById('edit') as HTMLDialogElement).showModal())
    await eventually(() => page.evaluate(() => document.querySelector('marginalia-overlay')!.parentElement?.id)).toBe('edit')
    await page.evaluate(() => document.getElementById('edit')!.remove())
    await eventually(() => page.evaluate(() => document.querySelector('marginalia-overlay')!.parentElement === document.documentElement)).toBe(true)
    expect(await hitAt(page, '.annotate')).toBe('overlay')
  })
})
