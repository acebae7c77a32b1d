/**
 * Copy as Markdown in the overlay: one annotation from its thread, all of the page's
 * from the list, in shared/markdown.ts's compact form (element as a person names it, selector,
 * page, source file:line, comment, status, thread). And the thread's source location links to the
 * editor when the server knows the project root (the same link as the inbox's).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { openPage, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

describe.skipIf(!enabled)('copy as Markdown and the editor link', () => {
  it('copies one annotation from its thread and all from the list; links the source to the editor', { timeout: 90_000 }, async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'marginalia-md-'))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    const { store, http } = await startMarginalia(cleanups, { sources: { root } })
    const pages = await servePages({
      '/shop': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body style="padding:40px">
<button id="buy" aria-label="Buy now">Buy</button> <h2 id="total">Total</h2><script src="${http.url}/overlay.js" defer></script></body></html>`,
    }, cleanups)
    const context = await chromium.browser.newContext({ viewport: { width: 1024, height: 700 } })
    cleanups.push(() => context.close())
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pages.origin })
    const page = await context.newPage()

    const session = await store.createSession({ url: `${pages.origin}/shop` })
    const buy = await store.addAnnotation({
      sessionId: session.id,
      url: `${pages.origin}/shop`,
      comment: 'Buy button is hard to see',
      element: { selector: '#buy', tag: 'button', accessibleName: 'Buy now' },
      source: { file: 'src/Cart.tsx', line: 42, component: 'Cart' },
    })
    await store.reply(buy.id, { author: 'agent', message: 'Which colour would you like?', kind: 'question' })
    await store.addAnnotation({ sessionId: session.id, url: `${pages.origin}/shop`, comment: 'Total is missing tax', element: { selector: '#total', tag: 'h2', text: 'Total' } })
    await openPage(page, `${pages.origin}/shop`)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(2)

    // One annotation, from its thread; its source links to the editor.
    await ui(page, '.pin').first().click()
    const link = ui(page, '.thread a.source-link')
    await eventually(() => link.count()).toBe(1)
    expect(await link.textContent()).toBe('src/Cart.tsx:42')
    expect(await link.getAttribute('href')).toBe(`vscode://file${encodeURI(`${root}/src/Cart.tsx:42`)}`)
    await ui(page, '.thread .copy-md').click()
    await eventually(() => ui(page, '.toast').textContent()).toBe('Copied #1 as Markdown.')
    const one = await page.evaluate(() => navigator.clipboard.readText())
    expect(one).toContain('### #1 Buy button is hard to see')
    expect(one).toContain('**Status:** pending')
    expect(one).toContain('- **Element:** button "Buy now" — `#buy`')
    expect(one).toContain('- **Source:** `src/Cart.tsx:42 in <Cart>`')
    expect(one).toContain(`- **Page:** ${pages.origin}/shop`)
    expect(one).toContain('- **Agent (question):**\n  > Which colour would you like?')
    expect(one).not.toContain('Total is missing tax')

    // All of the page's, from the list.
    await page.keyboard.press('Escape')
    await ui(page, '.count').click()
    await ui(page, '.list-panel .copy-md').click()
    await eventually(() => ui(page, '.toast').textContent()).toBe('Copied 2 annotations as Markdown.')
    const all = await page.evaluate(() => navigator.clipboard.readText())
    expect(all.split('\n')[0]).toBe(`## Annotations on ${new URL(pages.origin).host}/shop`)
    expect(all).toContain('### 1. Buy button is hard to see')
    expect(all).toContain('### 2. Total is missing tax')
    expect(all).toContain('- **Element:** heading "Total" — `#total`')
  })
})
