/**
 * Selecting text by touch in annotate mode: on a phone a long press selects a word and
 * the person then drags the selection's handles; no mouseup comes. Once the finger is up and the
 * selection has stopped changing, the comment box opens on the selected words, anchored by quote
 * and context as with a mouse, and the page sees none of the touches. A real long-press gesture
 * (CDP Input.synthesizeTapGesture with a duration: touch events, no click, no mouse events) on a
 * 375×667 isMobile/hasTouch context; the selection itself is made through the Selection API while
 * the finger is down, as the phone's long press makes it (headless Chromium has no touch
 * selection of its own), and the handles are moved the same way.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { phonePage, servePages, startMarginalia } from '../../helpers/page.js'
import { openPage, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const page = (overlay: string) =>
  phonePage(
    'Story',
    'margin:0;padding:16px;font:18px/1.5 sans-serif',
    `<h1 style="font-size:22px">Story</h1>
<p id="story">The quick brown fox jumps over the lazy dog. The fox is quick.</p>
<button id="buy" type="button" style="margin-top:24px;padding:10px 16px">Buy the book</button>
<div style="height:900px"></div>
<script>
  // The finger as the window sees it first (before the overlay), and whether the box was open when it lifted.
  window.finger = { down: false, boxOpenAtLift: null }
  window.addEventListener('touchstart', () => (window.finger.down = true), true)
  window.addEventListener('touchend', () => {
    window.finger.down = false
    const box = document.querySelector('marginalia-overlay')?.shadowRoot?.querySelector('.composer')
    window.finger.boxOpenAtLift = !!box && !box.hidden
  }, true)
  window.seen = []
  for (const type of ['touchstart', 'touchend', 'pointerdown', 'mousedown', 'mouseup', 'click', 'contextmenu']) document.addEventListener(type, (e) => {
    // Presses on the overlay itself pass through the page as its host's; those on the page must not.
    if (e.target.localName !== 'marginalia-overlay') window.seen.push(type)
  })
</script>
${overlay}`,
  )

type Box = { left: number; top: number; right: number; bottom: number }

/** Select the `nth` occurrence of `words` in #story (as a long press and the handles do), and return their box; `apply: false` only measures. */
function select(p: Page, words: string, nth = 0, apply = true): Promise<Box> {
  return p.evaluate(
    ([w, n, on]) => {
      const text = document.getElementById('story')!.firstChild as Text
      let at = -1
      for (let i = 0; i <= n; i++) at = text.data.indexOf(w, at + 1)
      const range = document.createRange()
      range.setStart(text, at)
      range.setEnd(text, at + w.length)
      if (on) {
        getSelection()!.removeAllRanges()
        getSelection()!.addRange(range)
      }
      const r = range.getBoundingClientRect()
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
    },
    [words, nth, apply] as const,
  )
}

type Finger = { finger: { down: boolean; boxOpenAtLift: boolean | null } }

const overlaps = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom

describe.skipIf(!enabled)('selecting text by touch', () => {
  it('a long press and the handles select words; with the finger up the box opens on them, anchored by quote, and the page sees no touch', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const pages = await servePages({ '/story': page(`<script src="${http.url}/overlay.js" defer></script>`) }, cleanups)
    const { context, page: p } = await chromium.newPage({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 })
    await openPage(p, `${pages.origin}/story`)
    const cdp = await context.newCDPSession(p)

    await ui(p, '.annotate').tap()
    await eventually(() => ui(p, '.toast').textContent()).toContain('select text')
    await p.evaluate(() => ((window as unknown as { seen: string[] }).seen = []))

    // A long press on the first "fox" selects it (a real long-press gesture: no click and no mouse
    // events follow it, unlike a tap). While the finger is down nothing is picked.
    const first = await select(p, 'fox', 0, false)
    const press = cdp.send('Input.synthesizeTapGesture', { x: (first.left + first.right) / 2, y: (first.top + first.bottom) / 2, duration: 1_500, tapCount: 1, gestureSourceType: 'touch' })
    await eventually(() => p.evaluate(() => (window as unknown as Finger).finger.down)).toBe(true)
    await select(p, 'fox')
    await press
    // The finger is lifted: the box was not open before, and now opens on the selected words (not the paragraph).
    expect(await p.evaluate(() => (window as unknown as Finger).finger)).toEqual({ down: false, boxOpenAtLift: false })
    await eventually(() => ui(p, '.composer blockquote.selected').textContent()).toBe('fox')
    expect(await ui(p, '.composer .target .label').textContent()).toMatch(/^paragraph/)
    expect(await p.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual([])
    // The box does not cover the words it is about, and is on screen.
    const composer = await ui(p, '.composer').evaluate((el) => {
      const r = el.getBoundingClientRect()
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
    })
    expect(overlaps(composer, first)).toBe(false)
    expect(composer.left >= 0 && composer.right <= 375 && composer.top >= 0 && composer.bottom <= 667).toBe(true)
    await p.screenshot({ path: 'test/browser/overlay-screen/.screenshots/touch-selection.png' })
    // The toolbar and the hint above it stay on screen too (a long hint once widened them past its left edge).
    for (const part of ['.bar', '.toast']) {
      const r = await ui(p, part).evaluate((el) => el.getBoundingClientRect().toJSON() as Box)
      expect([part, r.left >= 0 && r.right <= 375]).toEqual([part, true])
    }

    await ui(p, '.composer textarea').fill('Make it a cat')
    await ui(p, '.composer button[type="submit"]').tap()
    await eventually(() => store.getAllPending().length).toBe(1)
    const sent = store.getAllPending()[0]!
    expect(sent.selectedText).toBe('fox')
    expect(sent.element?.quote).toEqual({ exact: 'fox', prefix: 'The quick brown ', suffix: ' jumps over the lazy dog. The fo', start: 16, end: 19 })
    // The pin sits at the end of the words.
    await eventually(async () => {
      const pin = await p.evaluate(() => {
        const el = document.querySelector('marginalia-overlay')!.shadowRoot!.querySelector<HTMLElement>('.pin')!
        return { x: parseFloat(el.style.left), y: parseFloat(el.style.top), hidden: el.hidden }
      })
      return !pin.hidden && Math.abs(pin.x - first.right) <= 1 && Math.abs(pin.y - (first.top + first.bottom) / 2) <= 1
    }).toBe(true)

    // Still in annotate mode: the handles move the selection without touching the page (a word,
    // then dragged on to more words); once it stops changing, the box opens on all of them.
    await p.evaluate(() => getSelection()!.removeAllRanges())
    await select(p, 'lazy')
    await select(p, 'lazy dog')
    await eventually(() => ui(p, '.composer blockquote.selected').textContent()).toBe('lazy dog')
    await ui(p, '.composer textarea').fill('A sleepy dog')
    await ui(p, '.composer button[type="submit"]').tap()
    await eventually(() => store.getAllPending().map((a) => a.element?.quote?.exact)).toEqual(['fox', 'lazy dog'])

    // A tap after all this still annotates the element tapped (no click is left swallowed).
    await p.evaluate(() => getSelection()!.removeAllRanges())
    await p.locator('#buy').tap()
    await eventually(() => ui(p, '.composer .target .label').textContent()).toMatch(/^button 'Buy the book'/)
    expect(await ui(p, '.composer blockquote.selected').count()).toBe(0)
    expect(await p.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual([])
  })
})
