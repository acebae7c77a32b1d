/**
 * Picking what to annotate: the nearest meaningful element rather than an icon's
 * <path>, ↑/↓ and Alt+wheel to the parent and back, elements named as a person would, selected
 * words anchored by quote and context (pin at their end, highlighted while the thread is open),
 * Shift-click to add elements to one annotation and a drag to annotate an area.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { renderItems } from '../../../src/views/summary.js'
import { annotateMode, clickAt, frames, pins, send, setup, ui } from './setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const ICON = '<svg viewBox="0 0 20 20" width="24" height="24"><g><path d="M1 1 L19 19 M19 1 L1 19" stroke="black" stroke-width="4"/></g></svg>'
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders</title></head><body style="margin:0;padding:20px;font:16px sans-serif">
<ul class="orders" style="width:520px">
  <li class="order" style="padding:8px"><span class="title">Refund approved for order #4790</span> <button class="icon" aria-label="Delete">${ICON}</button></li>
  <li class="order" style="padding:8px"><span class="title">Refund pending for order #4791</span> <button class="icon" aria-label="Delete">${ICON}</button></li>
</ul>
<section aria-label="Story"><p id="story" style="width:600px">The quick brown fox jumps over the lazy dog. The fox is quick.</p></section>
<div class="tiles"><button class="t1">Alpha</button> <button class="t2" style="margin-left:520px">Beta</button> <button class="t3" style="margin-left:60px">Gamma</button></div>
<div id="empty" style="height:160px;width:500px;position:relative;margin-top:20px;border:1px dashed #ccc">
  <button class="x" style="position:absolute;left:60px;top:50px">One</button><button class="y" style="position:absolute;left:180px;top:50px">Two</button>
</div>
{{overlay}}</body></html>`

const label = (page: Page) => ui(page, '.highlight .label').textContent()

describe.skipIf(!enabled)('picking', () => {
  it('prefers the button around an icon, walks to the parent and back with arrows and Alt+wheel, and names elements as a person would', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    await annotateMode(page)
    const path = await page.locator('li.order').first().locator('path').boundingBox()
    await page.mouse.move(path!.x + path!.width / 2, path!.y + path!.height / 2)
    await expect.poll(() => label(page)).toMatch(/^button 'Delete'/)
    await page.keyboard.press('ArrowUp')
    await expect.poll(() => label(page)).toMatch(/^list item 'Refund approved for order #4790/)
    await page.keyboard.press('ArrowDown')
    await expect.poll(() => label(page)).toMatch(/^button 'Delete'/)
    await page.keyboard.down('Alt')
    await page.mouse.wheel(0, -100)
    await expect.poll(() => label(page)).toMatch(/^list item 'Refund approved/)
    await page.mouse.wheel(0, 100)
    await expect.poll(() => label(page)).toMatch(/^button 'Delete'/)
    await page.mouse.wheel(0, -100)
    await page.keyboard.up('Alt')
    await expect.poll(() => label(page)).toMatch(/^list item/)

    // A paragraph in a labelled section is the paragraph: only small things (icons, spans) climb to their control.
    const story = (await page.locator('#story').boundingBox())!
    await page.mouse.move(story.x + 30, story.y + story.height / 2)
    await expect.poll(() => label(page)).toMatch(/^paragraph 'The quick brown fox/)
    await page.mouse.move(path!.x + path!.width / 2, path!.y + path!.height / 2)
    await expect.poll(() => label(page)).toMatch(/^button 'Delete'/)
    await page.keyboard.press('ArrowUp')
    await expect.poll(() => label(page)).toMatch(/^list item/)

    // The click picks what the highlight shows: the list item.
    await page.mouse.click(path!.x + path!.width / 2, path!.y + path!.height / 2)
    await expect.poll(() => ui(page, '.composer .target .label').textContent()).toBe("list item 'Refund approved for order #4790'")
    await page.screenshot({ path: 'test/browser/overlay-anchor/.screenshots/picker-composer.png' })
    await send(page, 'Wrong wording')
    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.element).toMatchObject({ tag: 'li', label: "list item 'Refund approved for order #4790'", selector: expect.stringMatching(/li/) })
    // The thread names it too; the selector stays in its tooltip and for the agent.
    await ui(page, '.pin').first().click()
    await expect.poll(() => ui(page, '.thread .meta .label').textContent()).toBe("list item 'Refund approved for order #4790'")
    expect(await ui(page, '.thread .meta .label').getAttribute('title')).toBe(a!.element!.selector)
  })

  it('anchors selected words by quote and context: the pin at their end, found again after the text changed, highlighted in the thread', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    // The first "fox" of two: only the context tells them apart.
    await page.evaluate(() => {
      const text = document.getElementById('story')!.firstChild!
      const range = document.createRange()
      range.setStart(text, 16)
      range.setEnd(text, 19)
      getSelection()!.removeAllRanges()
      getSelection()!.addRange(range)
    })
    await page.keyboard.press('Alt+Shift+A')
    await expect.poll(() => ui(page, '.composer blockquote.selected').textContent()).toBe('fox')
    await send(page, 'Make it a cat')
    await eventually(() => store.getAllPending().length).toBe(1)
    expect(store.getAllPending()[0]!.element!.quote).toEqual({ exact: 'fox', prefix: 'The quick brown ', suffix: ' jumps over the lazy dog. The fo', start: 16, end: 19 })

    /** The end of the first "fox" now, and the pin. */
    const where = () =>
      page.evaluate(() => {
        const p = document.getElementById('story')!
        const text = p.firstChild as Text
        const i = text.data.indexOf('fox')
        const range = document.createRange()
        range.setStart(text, i)
        range.setEnd(text, i + 3)
        const r = range.getBoundingClientRect()
        const pin = document.querySelector('marginalia-overlay')!.shadowRoot!.querySelector<HTMLElement>('.pin')!
        return { words: { x: r.right, y: r.top + r.height / 2, left: r.left, width: r.width }, pin: { x: parseFloat(pin.style.left), y: parseFloat(pin.style.top), hidden: pin.hidden } }
      })
    await eventually(async () => {
      const { words, pin } = await where()
      return !pin.hidden && Math.abs(pin.x - words.x) <= 1 && Math.abs(pin.y - words.y) <= 1
    }).toBe(true)
    // New words before it: the offsets are stale, the context finds the same "fox".
    await page.evaluate(() => (document.getElementById('story')!.textContent = 'Today: The quick brown fox jumps over the lazy dog. The fox is quick.'))
    await frames(page)
    const moved = await where()
    expect(Math.abs(moved.pin.x - moved.words.x)).toBeLessThanOrEqual(1)
    expect((await pins(page))[0]!.anchor).toBe('found')

    // The thread highlights the words.
    await ui(page, '.pin').first().click()
    await eventually(() => ui(page, '.words .word').count()).toBe(1)
    const mark = await ui(page, '.words .word').boundingBox()
    expect(Math.abs(mark!.x - moved.words.left)).toBeLessThanOrEqual(1)
    expect(Math.abs(mark!.width - moved.words.width)).toBeLessThanOrEqual(1)
    await page.screenshot({ path: 'test/browser/overlay-anchor/.screenshots/quote-thread.png' })
    await ui(page, '.thread .icon-btn[aria-label="Close"]').click()
    await eventually(() => ui(page, '.words .word').count()).toBe(0)
  })

  it('adds elements with Shift-click and annotates a dragged area; the agent gets every element', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/orders': PAGE }, '/orders')
    await annotateMode(page)
    await clickAt(page, await page.locator('.t1').boundingBox())
    await clickAt(page, await page.locator('.t2').boundingBox(), 0.5, 0.5, ['Shift'])
    await clickAt(page, await page.locator('.t3').boundingBox(), 0.5, 0.5, ['Shift'])
    await expect.poll(() => ui(page, '.composer .target').textContent()).toBe("button 'Alpha' + 2 more")
    await eventually(() => ui(page, '.outlines .target-outline').count()).toBe(3)
    await send(page, 'These three should match')
    await eventually(() => store.getAllPending().length).toBe(1)
    const [several] = store.getAllPending()
    expect(several!.element!.selector).toMatch(/t1/)
    expect(several!.elements!.map((e) => [e.selector.match(/t\d/)?.[0], e.fingerprint?.text, e.rect!.width > 0])).toEqual([
      ['t2', 'Beta', true],
      ['t3', 'Gamma', true],
    ])
    expect(renderItems([several!]).join('\n')).toContain('+2 elements')

    // A drag over empty space: the area, the box around it, and the buttons inside it.
    await annotateMode(page)
    const box = (await page.locator('#empty').boundingBox())!
    await page.mouse.move(box.x + 20, box.y + 20)
    await page.mouse.down()
    await page.mouse.move(box.x + 150, box.y + 70, { steps: 4 })
    await page.mouse.move(box.x + 320, box.y + 120, { steps: 4 })
    await eventually(() => ui(page, '.band').isVisible()).toBe(true)
    await page.mouse.up()
    await expect.poll(() => ui(page, '.composer .target').textContent()).toBe("box 'One Two' + 2 more")
    await send(page, 'Too much space here')
    await eventually(() => store.getAllPending().length).toBe(2)
    const area = store.getAllPending()[1]!
    expect(area.element!.selector).toBe('#empty')
    expect(area.area).toEqual({ x: Math.round(box.x + 20), y: Math.round(box.y + 20), width: 300, height: 100 })
    expect(area.elements!.map((e) => e.fingerprint?.text)).toEqual(['One', 'Two'])
    expect(renderItems([area]).join('\n')).toMatch(/\+2 elements area \d+,\d+ 300x100/)
  })
})
