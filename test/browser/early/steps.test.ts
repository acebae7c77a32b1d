/**
 * The steps' recorder (src/browser/early/steps.ts) in real Chromium, as the early script runs it
 * (bundled from src/browser/early/main.ts, first in <head>): what each kind of step records,
 * scrolls coalesced, the record kept across a reload and bounded (100 steps, 5 minutes), typed
 * values masked by the setting and by default off local dev origins, secrets never read — and its
 * cost: a field's value read when its step is written, never per keystroke, no `input` listener, a clicked element named
 * only when the steps are read, and the main-thread time over a minute of ordinary use.
 */
import { createServer, type Server } from 'node:http'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { Step } from '../../../src/store/model.js'
import { stepLines } from '../../../src/store/steps.js'
import { useChromium } from '../../helpers/chromium.js'
import { buildEarlyScript, listenOnLoopback } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

let early = ''
beforeAll(async () => {
  early = await buildEarlyScript()
})

/**
 * Wraps every listener the recorder adds (those added before UNWRAP) to time each call. This
 * machine is shared: a call the OS preempts reads milliseconds of wall time it did not spend, so
 * the figure is each event kind's median call times its count (what a call costs, not when the
 * thread was away), less the median of a listener that does nothing (what timing costs).
 */
const TIMING = `<script>
window.__by = {}
const add = EventTarget.prototype.addEventListener
EventTarget.prototype.addEventListener = function (type, fn, opts) {
  if (typeof fn !== 'function') return add.call(this, type, fn, opts)
  return add.call(this, type, function (e) { const t = performance.now(); try { return fn.call(this, e) } finally { (window.__by[(fn.control ? 'control:' : '') + type] ||= []).push(performance.now() - t) } }, opts)
}
// The control: a listener that does nothing, on every event the recorder hears, timed the same way (what timing itself costs).
for (const type of ['click', 'input', 'change', 'focusout', 'keydown', 'submit', 'scroll', 'scrollend', 'resize', 'popstate', 'hashchange']) {
  const nothing = () => {}
  nothing.control = true
  window.addEventListener(type, nothing, true)
}
window.__add = add
</script>`
/** The page's own listeners, after the recorder's, are not timed. */
const UNWRAP = `<script>if (window.__add) EventTarget.prototype.addEventListener = window.__add</script>`
const UNTIMED = ''

function page(head: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Steps</title>${head}<script>${early}</script>${UNWRAP}<style>body{font:16px system-ui;margin:16px} .tall{height:3000px}</style></head><body>${body}</body></html>`
}

const FORM = `
<nav><a href="#details">Details</a> <a href="/list" id="go">List</a></nav>
<form aria-label="Order">
  <label>Name <input name="name"></label>
  <label>Colour <select name="colour"><option>Red</option><option>Blue</option></select></label>
  <fieldset><legend>Size</legend><label><input type="radio" name="size" value="s"> Small</label><label><input type="radio" name="size" value="l"> Large</label></fieldset>
  <label>Card <input name="card" autocomplete="cc-number"></label>
  <label>Code <input name="otp" autocomplete="one-time-code"></label>
  <div data-private><label>Secret answer <input name="answer"></label></div>
  <button type="submit">Order</button>
</form>
<div class="tall"></div>
<script>
document.querySelector('form').addEventListener('submit', (e) => e.preventDefault())
document.getElementById('go').addEventListener('click', (e) => { e.preventDefault(); history.pushState({}, '', '/list') })
</script>`

/** Serve `html()` at every path of a loopback origin; `headers` on each answer. */
async function serve(html: () => string, headers: Record<string, string> = {}): Promise<string> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...headers }).end(html()))
  return listenOnLoopback(server, cleanups)
}

const recent = (p: Page): Promise<Step[]> => p.evaluate(() => (window as unknown as Record<symbol, { recent(): Step[] }>)[Symbol.for('marginalia.steps')]!.recent())
const lines = async (p: Page): Promise<string[]> => stepLines(await recent(p)).map((l) => l.replace(/^\d+\. /, ''))

describe.skipIf(!enabled)('the steps recorder', () => {
  it('records each kind of step in order, coalesces scrolls, and never reads a secret field', async () => {
    const origin = await serve(() => page(UNTIMED, FORM))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    await p.getByLabel('Name').fill('Ann')
    await p.getByLabel('Name').fill('Ann Lee') // the final value, one step per focus
    await p.getByLabel('Colour').focus() // a person's choice (selectOption's events are a script's)
    await p.keyboard.press('ArrowDown')
    await p.getByLabel('Large').check()
    await p.getByLabel('Card').fill('4242424242424242')
    await p.getByLabel('Code').fill('123456')
    await p.getByLabel('Secret answer').fill('my-first-pet-rex')
    await p.getByLabel('Name').press('Enter')
    await p.keyboard.press('Escape')
    await p.getByRole('link', { name: 'Details' }).click()
    await p.getByRole('link', { name: 'List' }).click()
    await p.goBack()
    for (let i = 0; i < 8; i++) await p.mouse.wheel(0, 200)
    await p.waitForFunction(() => window.scrollY >= 1600)
    await expect.poll(() => lines(p)).toEqual([
      'open /order',
      'viewport 1024×700',
      'type "Ann Lee" in textbox "Name"',
      'select "Blue" in combobox "Colour"',
      'check radio "Large"',
      'type (not recorded) in textbox "Card"',
      'type (not recorded) in textbox "Code"',
      'type (not recorded) in textbox input[name="answer"]',
      'press Enter in textbox "Name"',
      'submit form "Order"',
      'press Escape in textbox "Name"',
      'click link "Details"',
      'go to /order#details',
      'click link "List"',
      'go to /list',
      'go to /order#details',
      'scroll to 0, 1600',
    ])
    const text = JSON.stringify(await recent(p))
    for (const secret of ['4242424242424242', '123456', 'my-first-pet-rex', 'Secret answer']) expect(text).not.toContain(secret)
  })

  it('makes one scroll step of gestures with no step between them, and a new one after a step or an annotation', async () => {
    const origin = await serve(() => page(UNTIMED, FORM))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    const scrollSteps = async (): Promise<string[]> => (await lines(p)).filter((l) => l.startsWith('scroll') || l.startsWith('press'))
    const wheelTo = async (dy: number, y: number): Promise<void> => {
      await p.mouse.move(300, 400)
      await p.mouse.wheel(0, dy)
      await p.waitForFunction((at) => window.scrollY === at, y)
    }
    await wheelTo(300, 300)
    await wheelTo(300, 600) // another gesture, no step between: the same step, moved
    await expect.poll(scrollSteps).toEqual(['scroll to 0, 600'])
    await p.keyboard.press('Escape') // a step, where the page is (nothing scrolls)
    await wheelTo(200, 800)
    await expect.poll(scrollSteps).toEqual(['scroll to 0, 600', 'press Escape', 'scroll to 0, 800'])
    // The person annotates: the next gesture is a step of its own, after the mark.
    await p.evaluate(() => (window as unknown as Record<symbol, { mark(): void }>)[Symbol.for('marginalia.steps')]!.mark())
    await wheelTo(-100, 700)
    await expect.poll(scrollSteps).toEqual(['scroll to 0, 700'])
  })

  it('takes the position a run of scrolling ends at from the click that ends it, reading no layout', async () => {
    // Every read of the window's scroll position counted (such a read lays out a page changed since its last frame).
    const counted = `<script>window.__reads = 0; for (const k of ['scrollX', 'scrollY', 'pageXOffset', 'pageYOffset']) { const d = Object.getOwnPropertyDescriptor(window, k); Object.defineProperty(window, k, { configurable: true, get() { window.__reads++; return d.get.call(window) } }) }</script>`
    const origin = await serve(() => page(counted, FORM))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    await p.mouse.move(300, 300)
    await p.mouse.wheel(0, 450)
    await p.waitForFunction(() => document.scrollingElement!.scrollTop === 450)
    await p.evaluate(() => (document.body.style.paddingTop = '3px')) // the page changed since its last frame
    await p.mouse.click(300, 300) // on the page's empty space
    const reads = await p.evaluate(() => (window as unknown as { __reads: number }).__reads)
    expect(reads).toBe(0)
    expect((await lines(p)).filter((l) => l.startsWith('scroll'))).toEqual(['scroll to 0, 450'])
  })

  it('hears a smooth scroll once, when it comes to rest, not on each of its frames', async () => {
    const origin = await serve(() => page(TIMING, FORM + '<style>html{scroll-behavior:smooth}</style>'))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    const frames = await p.evaluate(async () => {
      let n = 0
      const count = (): void => void n++
      document.addEventListener('scroll', count)
      const rested = new Promise((resolve) => document.addEventListener('scrollend', resolve, { once: true }))
      window.scrollBy(0, 1500)
      await rested
      document.removeEventListener('scroll', count)
      return n
    })
    expect(frames).toBeGreaterThan(3) // the browser scrolled smoothly, over several frames
    const calls = await p.evaluate(() => (window as unknown as { __by: Record<string, number[]> }).__by)
    expect(calls.scroll ?? []).toHaveLength(0)
    expect(calls.scrollend).toHaveLength(1)
    expect(await lines(p)).toContain('scroll to 0, 1500')
  })

  it('keeps the steps across a reload, starts after mark(), and masks typed values by the setting', async () => {
    // Counts the recorder's reads of the steps this tab kept (sessionStorage): none as a page loads.
    const reads = `<script>window.__reads = 0; const kept = sessionStorage; const get = Storage.prototype.getItem
Storage.prototype.getItem = function (key) { if (this === kept && key === 'marginalia:steps') window.__reads++; return get.call(this, key) }</script>`
    const origin = await serve(() => page(reads, FORM))
    const readsSoFar = (p: Page): Promise<number> => p.evaluate(() => (window as unknown as { __reads: number }).__reads)
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    await p.getByLabel('Name').fill('Ann')
    await p.getByRole('button', { name: 'Order' }).click()
    await p.reload()
    await p.waitForFunction(() => document.readyState === 'complete')
    expect(await readsSoFar(p)).toBe(0)
    expect(await lines(p)).toEqual(['open /order', 'viewport 1024×700', 'type "Ann" in textbox "Name"', 'click button "Order"', 'submit form "Order"', 'open /order'])
    expect(await readsSoFar(p)).toBe(1)
    await p.evaluate(() => (window as unknown as Record<symbol, { mark(): void }>)[Symbol.for('marginalia.steps')]!.mark())
    await p.getByLabel('Name').fill('Bea')
    await p.getByLabel('Name').blur()
    expect(await lines(p)).toEqual(['open /order', 'type "Bea" in textbox "Name"'])
    // maskInputs on: no typed value, those kept so far included, and remembered for the tab.
    await p.evaluate(() => (window as unknown as Record<symbol, { mask(on: boolean): void }>)[Symbol.for('marginalia.steps')]!.mask(true))
    expect(await lines(p)).toEqual(['open /order', 'type (not recorded) in textbox "Name"'])
    await p.reload()
    await p.getByLabel('Name').fill('Cy')
    await p.getByLabel('Name').blur()
    expect(JSON.stringify(await recent(p))).not.toMatch(/"(Ann|Bea|Cy)"/)
    // The setting came back with the kept steps, read when 'Cy' was first kept: what this tab saves holds no value either.
    expect(await p.evaluate(() => sessionStorage.getItem('marginalia:steps'))).not.toMatch(/"(Ann|Bea|Cy)"/)
    await p.reload()
    await p.getByLabel('Name').fill('Di')
    await p.getByLabel('Name').blur()
    await p.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide')))
    expect(await p.evaluate(() => sessionStorage.getItem('marginalia:steps'))).not.toMatch(/"(Ann|Bea|Cy|Di)"/)
  })

  it('masks typed values by default on an origin that is not a local dev origin', async () => {
    const { page: p } = await chromium.newPage()
    await p.route('https://shop.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: page(UNTIMED, FORM) }))
    await p.goto('https://shop.example/order')
    await p.getByLabel('Name').fill('Ann')
    await p.getByLabel('Colour').focus()
    await p.keyboard.press('ArrowDown')
    await p.getByLabel('Colour').blur()
    expect(await lines(p)).toEqual(['open /order', 'viewport 1024×700', 'type (not recorded) in textbox "Name"', 'select "Blue" in combobox "Colour"'])
  })

  it('keeps the last 100 steps of the last 5 minutes', { timeout: 90_000 }, async () => {
    const origin = await serve(() => page(UNTIMED, '<button type="button" id="b">Again</button>'))
    const { page: p } = await chromium.newPage()
    await p.clock.install()
    await p.goto(`${origin}/`)
    for (let i = 0; i < 120; i++) await p.locator('#b').click()
    const kept = await recent(p)
    expect(kept).toHaveLength(100)
    expect(kept.every((s) => s.kind === 'click')).toBe(true)
    await p.clock.fastForward('04:00')
    await p.locator('#b').click()
    await p.clock.fastForward('02:00')
    expect(await lines(p)).toEqual(['click button "Again"'])
  })

  it('names a clicked button by its words when clicked, though the page changes them at once, and a route by its redacted address', async () => {
    const origin = await serve(() =>
      page(UNTIMED, `<button type="button" id="save">  Save
      draft </button><script>
document.getElementById('save').addEventListener('click', (e) => { e.currentTarget.textContent = 'Saved'; history.pushState({}, '', '/done?token=abc123') })
</script>`),
    )
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/edit`)
    await p.locator('#save').click()
    expect(await p.locator('#save').textContent()).toBe('Saved')
    expect(await lines(p)).toEqual(['open /edit', 'viewport 1024×700', 'click button "Save draft"', 'go to /done?token=REDACTED'])
    expect(JSON.stringify(await recent(p))).not.toContain('abc123')
  })

  it('calls the listener handed to keys() after its own, on every key press (the page\'s own ones too), and that listener may take a key from the page; undefined takes it off', async () => {
    const origin = await serve(() =>
      page(UNTIMED, `<input id="q" aria-label="Search"><script>
window.pageKeys = []
document.addEventListener('keydown', (e) => window.pageKeys.push(e.key))
</script>`),
    )
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/search`)
    await p.evaluate(() => {
      const w = window as unknown as Record<string, string[]> & Record<symbol, { keys(l: ((e: KeyboardEvent) => void) | undefined): void }>
      w.heard = []
      w[Symbol.for('marginalia.steps')]!.keys((e) => {
        w.heard!.push(`${e.key}${e.isTrusted ? '' : ' (page)'}`)
        if (e.key === 'F2') {
          e.preventDefault()
          e.stopPropagation()
        }
      })
    })
    await p.locator('#q').press('a')
    await p.locator('#q').press('F2')
    await p.locator('#q').press('Enter')
    await p.evaluate(() => document.getElementById('q')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'x', bubbles: true })))
    expect(await p.evaluate(() => (window as unknown as Record<string, string[]>).heard)).toEqual(['a', 'F2', 'Enter', 'x (page)'])
    // F2 was taken: the page never heard it.
    expect(await p.evaluate(() => (window as unknown as Record<string, string[]>).pageKeys)).toEqual(['a', 'Enter', 'x'])
    // The recorder still records: the typing and the Enter.
    expect(await lines(p)).toEqual(['open /search', 'viewport 1024×700', 'type "a" in textbox "Search"', 'press Enter in textbox "Search"'])
    await p.evaluate(() => (window as unknown as Record<symbol, { keys(l: undefined): void }>)[Symbol.for('marginalia.steps')]!.keys(undefined))
    await p.locator('#q').press('b')
    expect(await p.evaluate(() => (window as unknown as Record<string, string[]>).heard)).toHaveLength(4)
  })

  it('reads a field\'s value when its step is written, not per keystroke, hears no input event, and names a clicked element only when the steps are read', async () => {
    // Counts, in the page's world, reads of a field's value, `input` listeners added, and attribute reads (the accessible name's).
    const SPY = `<script>
window.__count = { value: 0, inputListeners: 0, getAttribute: 0 }
const valueGetter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')
Object.defineProperty(HTMLInputElement.prototype, 'value', { configurable: true, get() { window.__count.value++; return valueGetter.get.call(this) }, set(v) { valueGetter.set.call(this, v) } })
const add = EventTarget.prototype.addEventListener
EventTarget.prototype.addEventListener = function (type, fn, opts) { if (type === 'input') window.__count.inputListeners++; return add.call(this, type, fn, opts) }
const getAttribute = Element.prototype.getAttribute
Element.prototype.getAttribute = function (name) { window.__count.getAttribute++; return getAttribute.call(this, name) }
</script>`
    const origin = await serve(() => page(SPY, FORM))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    const count = (): Promise<{ value: number; inputListeners: number; getAttribute: number }> => p.evaluate(() => ({ ...(window as unknown as { __count: { value: number; inputListeners: number; getAttribute: number } }).__count }))
    expect((await count()).inputListeners).toBe(0)
    await p.getByLabel('Name').click()
    const before = await count()
    await p.keyboard.type('Ann Lee')
    const typed = await count()
    await p.keyboard.press('Tab')
    const left = await count()
    await p.getByRole('button', { name: 'Order' }).click()
    const clicked = await count()
    const steps = await lines(p)
    const read = await count()
    // Seven keystrokes: no value read; leaving the field: its step written (Tab), then its change.
    expect(typed.value - before.value).toBe(0)
    expect(left.value - typed.value).toBeGreaterThanOrEqual(1)
    expect(left.value - typed.value).toBeLessThanOrEqual(2)
    // The click read no attribute (no role, name or selector worked out); reading the steps did.
    expect(clicked.getAttribute - left.getAttribute).toBe(0)
    expect(read.getAttribute - clicked.getAttribute).toBeGreaterThan(0)
    expect(steps.slice(2)).toEqual(['type "Ann Lee" in textbox "Name"', 'press Tab in textbox "Name"', 'click button "Order"', 'submit form "Order"'])
  })

  it('reads only the key of a keystroke in the field typed in, and ends that typing at a click when the field left the page unheard', async () => {
    // Reads of an event's target counted; a focusout the page stops before the recorder hears it, as
    // a browser that fires none when the focused field is taken out of the page (Firefox).
    const SPY = `<script>
window.__targets = 0
const target = Object.getOwnPropertyDescriptor(Event.prototype, 'target')
Object.defineProperty(Event.prototype, 'target', { configurable: true, get() { window.__targets++; return target.get.call(this) } })
window.addEventListener('focusout', (e) => { if (window.__unheard) e.stopImmediatePropagation() }, true)
</script>`
    const origin = await serve(() => page(SPY, FORM + '<label>City <input name="city"></label>'))
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    const targets = (): Promise<number> => p.evaluate(() => (window as unknown as { __targets: number }).__targets)
    await p.getByLabel('Name').click()
    await p.keyboard.type('A')
    const started = await targets()
    await p.keyboard.type('nn Lee')
    expect(await targets()).toBe(started)
    // The field goes with the focus in it, and no focusout is heard; the person types in another.
    await p.evaluate(() => {
      ;(window as unknown as { __unheard: boolean }).__unheard = true
      document.querySelector('input[name="name"]')!.remove()
    })
    await p.getByLabel('City').click()
    await p.keyboard.type('Oslo')
    expect((await lines(p)).filter((l) => l.startsWith('type'))).toEqual([expect.stringMatching(/^type "Ann Lee" in /), 'type "Oslo" in textbox "City"'])
  })

  // The goal is 1 ms a minute on a developer's machine. This shared 2-core machine runs the same
  // code about ten times slower (an empty listener's median call is ~10 µs here), so the bound
  // checked is 10 ms: a regression guard that prints the figure, not the goal itself.
  it('costs a few ms of main thread at most over a minute of ordinary use', { timeout: 120_000 }, async () => {
    // Cross-origin isolated: performance.now() in 5 µs steps instead of 100 µs.
    const origin = await serve(() => page(TIMING, FORM + '<ul>' + Array.from({ length: 30 }, (_, i) => `<li><strong>Item ${i}</strong> <button type="button">Add</button></li>`).join('') + '</ul>'), {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
    })
    const { page: p } = await chromium.newPage()
    await p.goto(`${origin}/order`)
    expect(await p.evaluate(() => crossOriginIsolated)).toBe(true)
    // A minute of ordinary use: 12 clicks, 3 fields typed (50 keys), a choice, 2 Enters, 80 wheel scrolls, 4 route changes, mouse moves.
    const buttons = p.getByRole('button', { name: 'Add' })
    for (let i = 0; i < 12; i++) await buttons.nth(i).click()
    for (const [label, text] of [['Name', 'Ann Lee of the hills'], ['Card', '4242424242424242'], ['Secret answer', 'rex the dog 12']] as const) {
      await p.getByLabel(label).click()
      await p.keyboard.type(text)
      await p.keyboard.press('Tab')
    }
    await p.getByLabel('Colour').focus()
    await p.keyboard.press('ArrowDown')
    for (let i = 0; i < 2; i++) await p.getByLabel('Name').press('Enter')
    for (let i = 0; i < 80; i++) await p.mouse.wheel(0, i < 40 ? 100 : -100)
    for (let i = 0; i < 200; i++) await p.mouse.move(10 + i * 3, 200 + (i % 20))
    for (let i = 0; i < 2; i++) {
      await p.getByRole('link', { name: 'List' }).click()
      await p.getByRole('link', { name: 'Details' }).click()
    }
    const steps = await recent(p)
    const calls = await p.evaluate(() => (window as unknown as { __by: Record<string, number[]> }).__by)
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const byKind = Object.fromEntries(
      Object.entries(calls)
        .filter(([type]) => !type.startsWith('control:'))
        .map(([type, xs]) => {
          const net = Math.max(0, median(xs) - median(calls[`control:${type}`] ?? [0]))
          return [type, { calls: xs.length, median: median(xs), net, ms: net * xs.length }]
        }),
    )
    const spent = Object.values(byKind).reduce((t, k) => t + k.ms, 0)
    process.stderr.write(`steps recorder: ${spent.toFixed(3)} ms of main thread for a minute of use (${steps.length} steps): ${JSON.stringify(byKind)}\n`)
    expect(steps.length).toBeGreaterThan(20)
    expect(spent).toBeLessThanOrEqual(10)
  })
})
