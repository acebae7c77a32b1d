/**
 * The thread and the composer: after a reply, an answer or a reopen with a message the
 * box is empty (a live re-render used to restore the sent text); the quoted words are readable in
 * full however many replies follow; a long comment folds behind "Show more"; a pasted comment past
 * the 10 000-character limit stays whole and the person is told (never cut silently); Ctrl+Enter
 * sends from anywhere in the composer and the thread.
 */
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateMode, clickAt, openPage, pins, send, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body style="margin:0;padding:40px;font:14px sans-serif"><p id="terms">${'These terms apply to every order placed in the shop. '.repeat(6)}</p><button id="buy">Buy</button>{{overlay}}</body></html>`

const QUOTE = 'These terms apply to every order placed in the shop. '.repeat(5).trim()
const LONG = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: the totals column is misaligned by a few pixels.`).join('\n')

describe.skipIf(!enabled)('thread and composer', () => {
  it('empties the box after a reply, an answer and a reopen; shows the quote in full and folds a long comment', { timeout: 90_000 }, async () => {
    const { store, pages, page } = await setup(chromium.browser, cleanups, { '/shop': PAGE }, '/shop', { width: 1024, height: 760 })
    const session = await store.createSession({ url: `${pages.origin}/shop` })
    const a = await store.addAnnotation({ sessionId: session.id, comment: LONG, selectedText: QUOTE, element: { selector: '#terms' } })
    for (let i = 0; i < 4; i++) await store.reply(a.id, { author: 'agent', message: `Looking at it (${i + 1}).` })
    await openPage(page, `${pages.origin}/shop`)
    await ui(page, '.pin').click()
    await eventually(() => ui(page, '.thread').isVisible()).toBe(true)

    // The quote is whole and not squashed by the replies: its box is as tall as its text.
    const quote = ui(page, '.thread blockquote.selected')
    expect(await quote.textContent()).toBe(QUOTE)
    const size = await quote.evaluate((el) => ({ client: el.clientHeight, scroll: el.scrollHeight }))
    expect(size.client).toBeGreaterThan(40)
    expect(size.client).toBeGreaterThanOrEqual(size.scroll - 1)

    // The 40-line comment is folded; Show more unfolds it, and it stays unfolded across a live update.
    const comment = ui(page, '.thread .comment')
    expect(await comment.getAttribute('class')).toContain('folded')
    expect((await comment.boundingBox())!.height).toBeLessThan(200)
    await ui(page, '.thread .foldable .more').first().click()
    expect(await comment.getAttribute('class')).not.toContain('folded')
    await store.reply(a.id, { author: 'agent', message: 'Which browser?', kind: 'question' })
    await eventually(() => ui(page, '.thread .reply[data-open]').count()).toBe(1)
    expect(await ui(page, '.thread .comment').getAttribute('class')).not.toContain('folded')

    // Answer the question: the box is empty afterwards (it used to get the sent text back).
    const box = ui(page, '.thread .reply-form textarea')
    await box.fill('Chrome 126 on Windows.')
    await ui(page, '.thread .reply-form button[type="submit"]').click()
    await eventually(() => store.getAnnotation(a.id).replies.at(-1)?.message).toBe('Chrome 126 on Windows.')
    await eventually(() => ui(page, '.thread .reply-form textarea').inputValue()).toBe('')
    await eventually(() => ui(page, '.thread .reply-form textarea').inputValue()).toBe('') // after the live event too

    // A plain reply sent with Ctrl+Enter while focus is on the panel, not in the box.
    await box.fill('Also on Edge.')
    await ui(page, '.thread .panel-title').click()
    await ui(page, '.thread').focus()
    await page.keyboard.press('Control+Enter')
    await eventually(() => store.getAnnotation(a.id).replies.at(-1)?.message).toBe('Also on Edge.')
    await eventually(() => ui(page, '.thread .reply-form textarea').inputValue()).toBe('')

    // Reopen with a message: empty afterwards.
    await store.resolve(a.id, { summary: 'Aligned the column.' })
    await eventually(() => ui(page, '.thread .chip').textContent()).toBe('Resolved')
    await ui(page, '.thread .reply-form textarea').fill('Still off by 1px.')
    await ui(page, '.thread').getByRole('button', { name: 'Reopen' }).click()
    await eventually(() => store.getAnnotation(a.id).status).toBe('pending')
    expect(store.getAnnotation(a.id).replies.at(-1)?.message).toBe('Still off by 1px.')
    await eventually(() => ui(page, '.thread .reply-form textarea').inputValue()).toBe('')
    await page.screenshot({ path: 'test/browser/overlay-ui/.screenshots/thread.png' })
  })

  it('keeps a pasted comment past 10 000 characters whole and says so; Ctrl+Enter sends from a radio button', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/shop': PAGE }, '/shop')
    await annotateMode(page)
    await clickAt(page, await page.locator('#buy').boundingBox())
    const text = ui(page, '.composer textarea')
    await text.fill('x'.repeat(12_345))
    expect((await text.inputValue()).length).toBe(12_345)
    await eventually(() => ui(page, '.composer .error').textContent()).toContain('the limit is 10 000')
    expect(await ui(page, '.composer .chars.over').textContent()).toBe('12 345 / 10 000: 2 345 too many')
    await ui(page, '.composer button[type="submit"]').click()
    // Refused in the box (the last check shows nothing of it ever reached the server).
    expect(await ui(page, '.composer .error').textContent()).toContain('Shorten it by 2 345 characters')
    expect(await ui(page, '.composer').isVisible()).toBe(true)

    // Shortened to 9 500: the counter shows, in its plain colour, and the error goes.
    await text.fill('y'.repeat(9_500))
    expect(await ui(page, '.composer .chars').textContent()).toBe('9 500 / 10 000')
    expect(await ui(page, '.composer .chars.over').count()).toBe(0)
    expect(await ui(page, '.composer .error').isVisible()).toBe(false)
    await text.fill('Buy button needs a price')
    expect(await ui(page, '.composer .chars').isVisible()).toBe(false)

    // Ctrl+Enter with focus on a severity radio button, not in the text box.
    await ui(page, '.composer input[name="severity"][value="blocking"]').focus()
    await page.keyboard.press('Control+Enter')
    await eventually(() => store.getAllPending().map((x) => [x.comment, x.severity])).toEqual([['Buy button needs a price', 'important']])
    expect(store.getAllPending()).toHaveLength(1)
  })
  it('a sent annotation is one pin while the answer to its POST is slow and the server’s event came first', { timeout: 90_000 }, async () => {
    const { store, page } = await setup(chromium.browser, cleanups, { '/shop': PAGE }, '/shop')
    // The POST reaches the server at once; its answer is held until the page shows the stored copy.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    await page.route(/\/api\/sessions\/[^/]+\/annotations$/, async (route) => {
      if (route.request().method() !== 'POST') return route.continue()
      const response = await route.fetch()
      await held
      await route.fulfill({ response })
    })
    await annotateMode(page)
    await clickAt(page, await page.locator('#buy').boundingBox())
    await ui(page, '.composer input[name="screenshot"]').uncheck()
    await send(page, 'Buy button needs a price')
    await eventually(() => store.getAllPending().length).toBe(1)
    await eventually(() => ui(page, '.pin[data-n="1"]').count()).toBe(1)
    // The stored copy has come by the server's event; the copy in the outbox is not drawn beside it.
    expect((await pins(page)).map((p) => p.n)).toEqual(['1'])
    await page.keyboard.press('Escape')
    await ui(page, '.count').click()
    await eventually(() => ui(page, '.list-panel .item').count()).toBe(1)
    expect(await ui(page, '.list-panel .outbox-item').count()).toBe(0)
    release()
    await eventually(() => ui(page, '.toast').textContent()).toContain('Sent as #1')
    expect((await pins(page)).map((p) => p.n)).toEqual(['1'])
    expect(store.getAllPending()).toHaveLength(1)
  })
})
