/**
 * Elements inside open shadow roots and iframes. A web component nested in another:
 * the selector is recorded through its shadow hosts, resolved the same way, and the agent gets
 * the composed path. A same-origin iframe: its elements are annotated (iframe selector → inner
 * selector); a cross-origin iframe: the iframe element is. In annotate mode no click reaches the
 * page or any iframe.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages } from '../../helpers/page.js'
import { renderItems } from '../../../src/views/summary.js'
import { annotateMode, clickAt, frames, pins, send, setup, ui } from './setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const COMPONENTS = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Cards</title></head><body style="margin:0;padding:20px">
<div id="cards"><x-card title="First"></x-card><x-card title="Second"></x-card></div>
<script>
  window.deletes = 0
  customElements.define('x-actions', class extends HTMLElement {
    constructor() {
      super()
      const root = this.attachShadow({ mode: 'open' })
      root.innerHTML = '<button class="edit">Edit</button> <button class="delete">Delete</button>'
      root.querySelector('.delete').addEventListener('click', () => window.deletes++)
    }
  })
  customElements.define('x-card', class extends HTMLElement {
    constructor() {
      super()
      const root = this.attachShadow({ mode: 'open' })
      root.innerHTML = '<div class="box" style="border:1px solid #999;padding:12px;margin:8px 0;width:320px"><h3></h3><x-actions></x-actions></div>'
      root.querySelector('h3').textContent = this.getAttribute('title')
    }
  })
</script>
{{overlay}}</body></html>`

const FRAMES = (other: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frames</title></head><body style="margin:0;padding:20px">
<h1>Checkout</h1>
<iframe id="pay" src="/inner" style="width:420px;height:120px;border:4px solid #888;padding:6px"></iframe>
<iframe id="ext" src="${other}/ext" style="width:420px;height:120px;border:4px solid #888"></iframe>
{{overlay}}</body></html>`
const INNER = `<!doctype html><html><body style="margin:10px"><p>Card ending 4242</p><div class="row"><button class="pay">Pay now</button></div>
<script>window.clicks = 0; document.querySelector('.pay').addEventListener('click', () => window.clicks++)</script></body></html>`
const EXT = `<!doctype html><html><body><button>Accept cookies</button>
<script>window.clicks = 0; document.querySelector('button').addEventListener('click', () => window.clicks++)</script></body></html>`

/** Whether the pin numbered `n` has its tip inside the box that `find` returns (run in the page). */
async function pinInside(page: Page, n: string, box: { x: number; y: number; width: number; height: number } | null): Promise<boolean> {
  const pin = (await pins(page)).find((p) => p.n === n)
  if (!pin || pin.hidden || !box) return false
  return pin.x >= box.x && pin.x <= box.x + box.width && pin.y >= box.y && pin.y <= box.y + box.height
}

describe.skipIf(!enabled)('shadow DOM and iframes', () => {
  it('annotates an element two shadow roots deep: recorded through its hosts, resolved the same way, composed for the agent', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/cards': COMPONENTS }, '/cards')
    const second = page.locator('x-card[title="Second"] x-actions button.delete')
    await annotateMode(page)
    await clickAt(page, await second.boundingBox())
    expect(await page.evaluate(() => (window as unknown as { deletes: number }).deletes)).toBe(0)
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe("button 'Delete'")
    await send(page, 'Ask before deleting')
    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.element).toMatchObject({ scopes: ['x-card[title="Second"]', 'x-actions'], selector: 'button.delete', label: "button 'Delete'" })
    expect(renderItems([a!]).join('\n')).toContain('`x-card[title="Second"] >>> x-actions >>> button.delete`')
    await eventually(async () => pinInside(page, '1', await second.boundingBox())).toBe(true)

    // Keyboard: Enter in annotate mode annotates the focused element inside the shadow roots.
    await annotateMode(page)
    await page.locator('x-card[title="First"] x-actions button.edit').focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe("button 'Edit'")
    await send(page, 'Edit is unclear')
    await eventually(() => store.getAllPending().length).toBe(2)
    expect(store.getAllPending()[1]!.element).toMatchObject({ scopes: ['x-card[title="First"]', 'x-actions'], selector: 'button.edit' })

    // A card added before it: the pin follows through both shadow roots at once.
    await page.evaluate(() => document.getElementById('cards')!.prepend(Object.assign(document.createElement('x-card'), { title: 'Zero' })))
    await frames(page)
    expect(await pinInside(page, '1', await second.boundingBox())).toBe(true)
  })

  it('annotates inside a same-origin iframe and a cross-origin iframe as itself; no click reaches either', { timeout: 90_000 }, async () => {
    const other = await servePages({ '/ext': EXT }, cleanups)
    const { store, page } = await setup(chromium.browser, cleanups, { '/checkout': FRAMES(other.origin), '/inner': INNER }, '/checkout')
    const pay = page.frameLocator('#pay').locator('button.pay')
    await pay.waitFor()
    const inner = page.frame({ url: /\/inner$/ })!
    const ext = page.frame({ url: /\/ext$/ })!
    await ext.locator('button').waitFor()

    await annotateMode(page)
    const box = await pay.boundingBox()
    await page.mouse.move(box!.x + 5, box!.y + 5)
    await clickAt(page, box)
    // The highlight named the element inside the frame, and the frame's handler never ran.
    expect(await inner.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBe(0)
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe("button 'Pay now'")
    await send(page, 'Pay button is too small')
    await eventually(() => store.getAllPending().length).toBe(1)
    expect(store.getAllPending()[0]!.element).toMatchObject({ scopes: ['#pay'], selector: 'button.pay', tag: 'button' })
    await eventually(async () => pinInside(page, '1', await pay.boundingBox())).toBe(true)

    await annotateMode(page)
    await clickAt(page, await ext.locator('button').boundingBox())
    expect(await ext.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBe(0)
    await send(page, 'Cookie banner in the way')
    await eventually(() => store.getAllPending().length).toBe(2)
    const [, frame] = store.getAllPending()
    expect(frame!.element).toMatchObject({ selector: '#ext', tag: 'iframe' })
    expect(frame!.element!.scopes).toBeUndefined()
    await page.screenshot({ path: 'test/browser/overlay-anchor/.screenshots/frames.png' })

    // Out of annotate mode the frames work again (clicked beside the pin, which sits where the person clicked).
    await ui(page, '.annotate').click()
    await expect.poll(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    await clickAt(page, await pay.boundingBox(), 0.1, 0.85)
    await eventually(() => inner.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBe(1)
  })
})
