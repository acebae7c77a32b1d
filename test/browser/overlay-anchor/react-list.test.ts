/**
 * Anchoring on a React list: a TodoMVC-shaped list built with the real react and
 * react-dom packages, whose items have no ids, so the stored selectors are positions
 * (`li:nth-of-type(2) > …`). After the list is reversed, an item is added on top and todos are
 * deleted, every pin is on its own element — found again by its fingerprint — or shown as not
 * found; never on another element. And it is there within two animation frames (no 1 s poll).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { renderItems } from '../../../src/views/summary.js'
import { annotateMode, clickAt, reactListBundle, send, setup, ui } from './setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
let bundle: string

beforeAll(async () => {
  if (enabled) bundle = await reactListBundle()
}, 60_000)

const PAGE = () => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Todos</title><style>
  body { margin: 0; padding: 24px; font: 16px sans-serif; }
  .todo-list { list-style: none; padding: 0; width: 420px; }
  .todo-list li { border-bottom: 1px solid #ddd; }
  .view { display: flex; align-items: center; gap: 8px; height: 44px; }
  .view label { flex: 1; }
  .destroy { width: 30px; height: 30px; }
</style></head><body><div id="root"></div><script>${bundle}</script>{{overlay}}</body></html>`

/**
 * Where each pin is, after `change` and two animation frames (one evaluate: no time in between):
 * "on" its own element, "lost" (shown as not found), "hidden", or WRONG.
 */
function after(page: Page, change: string): Promise<Record<string, string>> {
  return page.evaluate(async (change) => {
    const todos = (window as unknown as { todos: Record<string, (...a: string[]) => void> }).todos
    const [name, ...args] = JSON.parse(change) as string[]
    todos[name!]!(...args)
    await new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())))
    const row = (text: string) => [...document.querySelectorAll('.todo-list li')].find((li) => li.querySelector('label')?.textContent === text)
    const own: Record<string, Element | undefined> = {
      '1': row('Book flights')?.querySelector('label') ?? undefined,
      '2': row('Call the plumber')?.querySelector('.destroy') ?? undefined,
    }
    const out: Record<string, string> = {}
    for (const pin of document.querySelector('marginalia-overlay')!.shadowRoot!.querySelectorAll<HTMLElement>('.pin')) {
      const n = pin.textContent ?? ''
      if (pin.hidden) out[n] = 'hidden'
      else if (pin.dataset.anchor === 'lost') out[n] = 'lost'
      else {
        const el = own[n]
        const r = el?.getBoundingClientRect()
        const x = parseFloat(pin.style.left)
        const y = parseFloat(pin.style.top)
        out[n] = r && x >= r.left && x <= r.right && y >= r.top && y <= r.bottom ? 'on' : `WRONG at ${x},${y}`
      }
    }
    return out
  }, change)
}

describe.skipIf(!enabled)('anchoring on a React list', () => {
  it('keeps each pin on its own element or shows it as not found, after reverse, add on top and deletes', { timeout: 120_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/todos': PAGE() }, '/todos')
    await page.locator('.todo-list li').first().waitFor()

    // #1: the label "Book flights" (second row); #2: the delete button of "Call the plumber" (first row), clicked on its icon.
    await annotateMode(page)
    await clickAt(page, await page.locator('li', { hasText: 'Book flights' }).locator('label').boundingBox(), 0.2, 0.5)
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe("label 'Book flights'")
    await send(page, 'Typo in this one')
    await eventually(() => store.getAllPending().length).toBe(1)
    await annotateMode(page)
    await clickAt(page, await page.locator('li', { hasText: 'Call the plumber' }).locator('.destroy path').boundingBox())
    // The picker took the button around the icon, not its <path>.
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe('button')
    await send(page, 'Delete should ask first')
    await eventually(() => store.getAllPending().length).toBe(2)

    const [label, button] = store.getAllPending()
    expect(label!.element!.selector).toMatch(/li:nth-of-type\(2\) > div\.view > label$/)
    expect(label!.element!.fingerprint).toMatchObject({ tag: 'label', text: 'Book flights' })
    expect(button!.element!.selector).toMatch(/li:nth-of-type\(1\) > div\.view > button\.destroy$/)
    expect(button!.element!.fingerprint).toMatchObject({ tag: 'button', near: 'Call the plumber' })
    expect(button!.element!.at).toMatchObject({ x: expect.any(Number), y: expect.any(Number) })
    // The agent's one-line view names the element as a person would.
    expect(renderItems([label!]).join('\n')).toContain("label 'Book flights'")

    await eventually(() => after(page, JSON.stringify(['rename', 'none', 'none']))).toEqual({ '1': 'on', '2': 'on' })
    const steps: [string[], Record<string, string>][] = [
      [['reverse'], { '1': 'on', '2': 'on' }],
      [['addTop', 'Walk the dog'], { '1': 'on', '2': 'on' }],
      [['remove', 'Buy milk'], { '1': 'on', '2': 'on' }],
      [['reverse'], { '1': 'on', '2': 'on' }],
      [['remove', 'Call the plumber'], { '1': 'on', '2': 'lost' }],
      [['rename', 'Book flights', 'Book trains'], { '1': 'lost', '2': 'lost' }],
      [['rename', 'Book trains', 'Book flights'], { '1': 'on', '2': 'lost' }],
    ]
    for (const [change, expected] of steps) {
      // Never on a wrong element, at once: checked two frames after the re-render, not eventually.
      expect({ change, pins: await after(page, JSON.stringify(change)) }).toEqual({ change, pins: expected })
    }
    await page.screenshot({ path: 'test/browser/overlay-anchor/.screenshots/react-list.png' })

    // The list says which one is not found.
    await ui(page, '.count').click()
    await expect.poll(() => ui(page, '.list-panel').textContent()).toContain('element moved or not found')
    expect(await ui(page, '.list-panel li').nth(0).textContent()).not.toContain('not found')
    expect(await ui(page, '.list-panel li').nth(1).textContent()).toContain('element moved or not found')
  })
})
