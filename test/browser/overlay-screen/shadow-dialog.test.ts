/**
 * Always on top, inside web components: a modal `<dialog>` opened with showModal() in
 * an open shadow root — two shadow roots deep — is seen exactly as a light-DOM one is: the
 * overlay moves into it, above it and usable (an element in the dialog annotated, the comment
 * typed, Send), the annotation arrives with the composed path, and the page behind stays inert.
 * Also a component upgraded after the overlay started (no mutation announces its shadow root).
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateMode, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Components</title></head><body style="margin:0;font:16px sans-serif">
<main style="padding:20px"><h1>Orders</h1><button id="outside" type="button">Outside the dialog</button>
<order-editor></order-editor><late-dialog></late-dialog></main>
<script>
  window.pageClicks = 0
  document.getElementById('outside').addEventListener('click', () => { window.pageClicks++ })
  // The dialog lives in <order-dialog>'s shadow root, which lives in <order-editor>'s.
  customElements.define('order-dialog', class extends HTMLElement {
    constructor() {
      super()
      this.attachShadow({ mode: 'open' }).innerHTML = '<dialog id="edit" style="width:420px"><h2>Edit order</h2>' +
        '<label>Quantity <input id="qty" value="1"></label> <button id="save" type="button">Save changes</button></dialog>'
      this.shadowRoot.getElementById('save').addEventListener('click', () => { window.pageClicks++ })
    }
    open() { this.shadowRoot.getElementById('edit').showModal() }
    close() { this.shadowRoot.getElementById('edit').close() }
  })
  customElements.define('order-editor', class extends HTMLElement {
    constructor() {
      super()
      this.attachShadow({ mode: 'open' }).innerHTML = '<section><button id="edit-btn" type="button">Edit order</button><order-dialog></order-dialog></section>'
    }
  })
</script>
{{overlay}}</body></html>`

/** Where the overlay's host is now: the id of its parent, and whether that parent is in a shadow root. */
function hostPlace(page: Page): Promise<{ parent: string; inShadow: boolean }> {
  return page.evaluate(() => {
    const find = (root: Document | ShadowRoot): Element | null => {
      const here = root.querySelector('marginalia-overlay')
      if (here) return here
      for (const el of root.querySelectorAll('*')) {
        const inner = el.shadowRoot && find(el.shadowRoot)
        if (inner) return inner
      }
      return null
    }
    const host = find(document)!
    const parent = host.parentElement
    return { parent: parent === document.documentElement ? 'html' : (parent?.id ?? '?'), inShadow: host.getRootNode() !== document }
  })
}

/** What a hit test finds at the middle of an overlay part, through every shadow root: 'overlay' or a page element. */
function hitAt(page: Page, selector: string): Promise<string> {
  return ui(page, selector).evaluate((el) => {
    const r = el.getBoundingClientRect()
    const x = r.left + r.width / 2
    const y = r.top + r.height / 2
    let hit = document.elementFromPoint(x, y)
    while (hit?.shadowRoot && hit.localName !== 'marginalia-overlay') {
      const inner = hit.shadowRoot.elementFromPoint(x, y)
      if (!inner || inner === hit) break
      hit = inner
    }
    return hit?.localName === 'marginalia-overlay' ? 'overlay' : `${hit?.localName ?? 'nothing'}${hit?.id ? `#${hit.id}` : ''}`
  })
}

async function clickCentre(page: Page, box: { x: number; y: number; width: number; height: number } | null): Promise<void> {
  if (!box) throw new Error('no box')
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
}

const openEditor = (page: Page) => page.evaluate(() => (document.querySelector('order-editor')!.shadowRoot!.querySelector('order-dialog') as HTMLElement & { open(): void }).open())

describe.skipIf(!enabled)('the overlay above a web component\'s modal dialog', () => {
  it('moves into a modal dialog two shadow roots deep, is usable there, sends with the composed path; the page stays inert', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    expect(await hostPlace(page)).toEqual({ parent: 'html', inShadow: false })

    await openEditor(page)
    await eventually(() => hostPlace(page)).toEqual({ parent: 'edit', inShadow: true })
    expect(await page.evaluate(() => document.querySelector('order-editor')!.shadowRoot!.querySelector('order-dialog')!.shadowRoot!.getElementById('edit')!.matches(':modal'))).toBe(true)
    await eventually(() => hitAt(page, '.annotate')).toBe('overlay')

    // Annotate the dialog's button: the click never reaches the component, the box opens and takes typing.
    await annotateMode(page)
    const save = page.locator('order-editor order-dialog #save')
    await clickCentre(page, await save.boundingBox())
    await ui(page, '.composer textarea').waitFor()
    expect(await hitAt(page, '.composer textarea')).toBe('overlay')
    await clickCentre(page, await ui(page, '.composer textarea').boundingBox())
    await page.keyboard.type('Save should say Update order')
    expect(await ui(page, '.composer textarea').inputValue()).toBe('Save should say Update order')
    expect(await page.locator('order-editor order-dialog #qty').inputValue()).toBe('1')
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/shadow-dialog-composer.png' })
    await clickCentre(page, await ui(page, '.composer button[type="submit"]').boundingBox())
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Save should say Update order'])

    // The agent gets the path through both shadow hosts, and it leads to that button.
    const element = store.getAllPending()[0]!.element!
    expect(element.scopes).toHaveLength(2)
    expect(element.scopes![0]).toContain('order-editor')
    expect(element.scopes![1]).toContain('order-dialog')
    expect(element.selector).toContain('save')
    const resolved = await page.evaluate(({ scopes, selector }) => {
      let root: Document | ShadowRoot = document
      for (const s of scopes) root = root.querySelector(s)!.shadowRoot!
      return root.querySelector(selector)?.id
    }, { scopes: element.scopes!, selector: element.selector })
    expect(resolved).toBe('save')
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(0)

    // The page behind stays inert, as the browser makes it: a real click on a page button does nothing.
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await clickCentre(page, await ui(page, '.annotate').boundingBox())
    expect(await ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    await clickCentre(page, await page.locator('#outside').boundingBox())
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(0)

    // The dialog closes: back to the root; the page is live again.
    await page.evaluate(() => (document.querySelector('order-editor')!.shadowRoot!.querySelector('order-dialog') as HTMLElement & { close(): void }).close())
    await eventually(() => hostPlace(page)).toEqual({ parent: 'html', inShadow: false })
    await clickCentre(page, await page.locator('#outside').boundingBox())
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(1)
  })

  it('a component upgraded after the overlay started (no mutation to see) and one added later: their modal dialogs are seen too', { timeout: 90_000 }, async () => {
    const { page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    // <late-dialog> was parsed undefined; defining it now attaches its shadow root with no mutation in the document.
    await page.evaluate(() => {
      customElements.define('late-dialog', class extends HTMLElement {
        connectedCallback() {
          if (this.shadowRoot) return
          this.attachShadow({ mode: 'open' }).innerHTML = '<dialog id="late"><p>Late</p><input id="late-input"></dialog>'
        }
      })
    })
    await page.evaluate(() => document.querySelector('late-dialog')!.shadowRoot!.querySelector('dialog')!.showModal())
    await eventually(() => hostPlace(page)).toEqual({ parent: 'late', inShadow: true })
    await eventually(() => hitAt(page, '.annotate')).toBe('overlay')
    await page.evaluate(() => document.querySelector('late-dialog')!.shadowRoot!.querySelector('dialog')!.close())
    await eventually(() => hostPlace(page)).toEqual({ parent: 'html', inShadow: false })

    // A component added to the page later, its dialog opened in the same task.
    await page.evaluate(() => {
      const el = document.createElement('div')
      el.id = 'added-host'
      el.attachShadow({ mode: 'open' }).innerHTML = '<dialog id="added"><button>OK</button></dialog>'
      document.body.append(el)
      el.shadowRoot!.querySelector('dialog')!.showModal()
    })
    await eventually(() => hostPlace(page)).toEqual({ parent: 'added', inShadow: true })
    await eventually(() => hitAt(page, '.annotate')).toBe('overlay')
    // The page removes the component with the overlay in it: the overlay comes back to the root, on top.
    await page.evaluate(() => document.getElementById('added-host')!.remove())
    await eventually(() => hostPlace(page)).toEqual({ parent: 'html', inShadow: false })
    expect(await hitAt(page, '.annotate')).toBe('overlay')
  })
})
