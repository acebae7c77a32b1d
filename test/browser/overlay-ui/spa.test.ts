/**
 * Client-side navigation: on pushState, replaceState and popstate the overlay reacts
 * at once — within two frames the old page's pins and its "Sent as #N" toast are gone (numbers
 * are per page) — and the new page's pins come.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateMode, clickAt, openPage, send, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/** A tiny router: two "pages" rendered by script, links that push history entries. */
const SPA = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SPA</title></head>
<body style="margin:0;padding:40px;font:14px sans-serif">
<nav><a href="/app/orders" id="to-orders">Orders</a> <a href="/app/settings" id="to-settings">Settings</a></nav><main id="view"></main>
<script>
  const views = {
    '/app/orders': '<h1>Orders</h1><button id="refund">Refund</button><button id="export">Export</button>',
    '/app/settings': '<h1>Settings</h1><label>Name <input id="name"></label><button id="save">Save</button>',
  }
  const render = () => { document.getElementById('view').innerHTML = views[location.pathname] || '<h1>Not found</h1>' }
  document.querySelector('nav').addEventListener('click', (e) => {
    const a = e.target.closest('a'); if (!a) return
    e.preventDefault(); history.pushState({}, '', a.getAttribute('href')); render()
  })
  addEventListener('popstate', render)
  render()
</script>
{{overlay}}</body></html>`

/** Right after `act` (in the page), two frames later: the pins' labels and whether the toast shows. */
function afterTwoFrames(page: Page, act: string): Promise<{ pins: string[]; toast: boolean }> {
  return page.evaluate(async (code) => {
    new Function(code)()
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
    const root = document.querySelector('marginalia-overlay')!.shadowRoot!
    return {
      pins: [...root.querySelectorAll<HTMLElement>('.pin')].filter((p) => !p.hidden).map((p) => p.getAttribute('aria-label') ?? ''),
      toast: root.querySelector('.toast')!.classList.contains('show'),
    }
  }, act)
}

describe.skipIf(!enabled)('client-side navigation', () => {
  it('drops the old page’s pins and toast within two frames of pushState, replaceState and popstate', { timeout: 90_000 }, async () => {
    const { store, pages, page } = await setup(chromium.browser, cleanups, { '/app/orders': SPA, '/app/settings': SPA }, '/app/orders')
    const settings = await store.createSession({ url: `${pages.origin}/app/settings` })
    await store.addAnnotation({ sessionId: settings.id, comment: 'Save should be disabled until a change', element: { selector: '#save' } })

    await annotateMode(page)
    await clickAt(page, await page.locator('#refund').boundingBox())
    await send(page, 'Refund needs a confirmation')
    await eventually(() => ui(page, '.toast').textContent()).toContain('Sent as #1')
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    // Annotate mode stays on after a send: off, so the link's click reaches the router.
    await page.keyboard.press('Escape')
    expect(await ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    // A loaded machine may have let the toast time out: a fresh one (the pins key, twice) just before.
    if (!(await ui(page, '.toast').getAttribute('class'))?.includes('show')) {
      await page.keyboard.press('Alt+Shift+P')
      await page.keyboard.press('Alt+Shift+P')
    }
    expect(await ui(page, '.toast').getAttribute('class')).toContain('show')

    // pushState (a router link): at once, nothing of the orders page is left.
    const pushed = await afterTwoFrames(page, "document.getElementById('to-settings').click()")
    // (The settings page's own pin may already be there: its session loads fast on a quiet machine.)
    expect(pushed.pins.filter((p) => p.includes('Refund needs'))).toEqual([])
    expect(pushed.toast).toBe(false)
    await eventually(async () => (await ui(page, '.pin').getAttribute('aria-label')) ?? '').toContain('Save should be disabled')
    expect(await ui(page, '.pin').count()).toBe(1)

    // popstate (Back): the settings pin goes at once, the orders pin comes back.
    const back = await afterTwoFrames(page, 'history.back()')
    expect(back.pins.filter((p) => p.includes('Save should'))).toEqual([])
    await eventually(async () => (await ui(page, '.pin').getAttribute('aria-label')) ?? '').toContain('Refund needs a confirmation')

    // replaceState to a page with no annotations: nothing shows.
    const replaced = await afterTwoFrames(page, "history.replaceState({}, '', '/app/empty')")
    expect(replaced.pins).toEqual([])
    // A full load of the settings page afterwards finds its own pin.
    await openPage(page, `${pages.origin}/app/settings`)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
  })
})
