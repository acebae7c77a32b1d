/**
 * What the overlay says about an element, checked in Chromium: src/browser/overlay/anchor/describe.ts bundled
 * on the fly and run on a page full of awkward markup.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import path from 'node:path'
import { build } from 'esbuild'
import type { Page } from 'playwright-core'
import { useChromium } from '../helpers/chromium.js'

const chromium = useChromium()
const { enabled } = chromium
let page: Page

const FIXTURE = `<!doctype html><html><head><title>t</title></head><body>
<header id="top"><nav><ul class="menu"><li><a href="/a">A</a></li><li><a href="/b">B</a></li><li><a href="/a">A again</a></li></ul></nav></header>
<main>
  <section class="cards">
    <div class="card"><h2>One</h2><button class="btn primary">Buy</button></div>
    <div class="card"><h2>Two</h2><button class="btn primary">Buy</button></div>
    <div class="card special"><h2>Three</h2><button class="btn primary">Buy</button></div>
  </section>
  <div id="dup">first dup</div><div id="dup">second dup</div>
  <div id=":r1:"><span>react id</span></div>
  <div id="a:b.c"><em>weird id</em></div>
  <div class="md:flex 1st css-1x2y3z sc-aXZVg">classes</div>
  <p><button class="_asyncButton_1d1zu_101 _button_1d1zu_37">Pay</button></p>
  <p class="Card_title__3xK9a">hashed by css-loader</p><p class="card__title">named by BEM</p>
  <form><input name="email"><input name="email" type="hidden"><input placeholder="Search" aria-label="Search"></form>
  <button data-testid="save">Save</button><button data-testid="save-copy">Save copy</button>
  <svg width="40" height="40"><circle cx="20" cy="20" r="10"></circle><circle cx="5" cy="5" r="2"></circle></svg>
  <table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>
  <article id="long"><p>${'Lorem ipsum dolor sit amet. '.repeat(60)}</p>${'<p>para</p>'.repeat(400)}</article>
  <p id="text">  Some   text\n  with   spaces ${'and more words '.repeat(40)}</p>
</main>
</body></html>`

interface Describe {
  uniqueSelector(el: Element): string
  domPath(el: Element): string
  textSnippet(el: Element): string
  trimmedHtml(el: Element, max?: number): string
  fitSelector(selector: string, max?: number): string
  describeElement(el: Element): { selector: string; path?: string; tag?: string; text?: string; html?: string; rect?: unknown }
}
declare global {
  interface Window {
    MarginaliaDescribe: Describe
  }
}

beforeAll(async () => {
  if (!enabled) return
  const bundle = await build({
    entryPoints: [path.resolve(import.meta.dirname, '../../src/browser/overlay/anchor/describe.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'MarginaliaDescribe',
    write: false,
    platform: 'browser',
  })
  // One page for the file (useChromium closes the browser after it): the tests only read it.
  page = await chromium.browser.newPage()
  await page.setContent(FIXTURE)
  await page.addScriptTag({ content: bundle.outputFiles[0]!.text })
}, 60_000)

describe.skipIf(!enabled)('element description in Chromium', () => {
  it('gives every element in the page a selector that matches it and nothing else', async () => {
    const result = await page.evaluate(() => {
      const bad: string[] = []
      const all = [...document.querySelectorAll('body *')]
      for (const el of all) {
        const selector = window.MarginaliaDescribe.uniqueSelector(el)
        let found: NodeListOf<Element> | undefined
        try {
          found = document.querySelectorAll(selector)
        } catch {
          bad.push(`${selector} (invalid)`)
          continue
        }
        if (found.length !== 1 || found[0] !== el) bad.push(`${selector} (${found.length} matches)`)
      }
      return { checked: all.length, bad }
    })
    expect(result.checked).toBeGreaterThan(400)
    expect(result.bad).toEqual([])
  })

  it('prefers a unique id or naming attribute, and skips duplicate and generated ids and hashed classes', async () => {
    const selectors = await page.evaluate(() => {
      const d = window.MarginaliaDescribe
      const q = (s: string, i = 0) => document.querySelectorAll(s)[i]!
      return {
        header: d.uniqueSelector(q('#top')),
        secondDup: d.uniqueSelector(q('[id="dup"]', 1)),
        react: d.uniqueSelector(q('[id=":r1:"]')),
        weird: d.uniqueSelector(q('[id="a:b.c"]')),
        save: d.uniqueSelector(q('[data-testid="save"]')),
        search: d.uniqueSelector(q('input[placeholder]')),
        thirdBuy: d.uniqueSelector(q('.card.special button')),
        classes: d.uniqueSelector(q('.sc-aXZVg')),
        circle: d.uniqueSelector(q('circle', 1)),
        link: d.uniqueSelector(q('a', 2)),
        viteModule: d.uniqueSelector(q('._asyncButton_1d1zu_101')),
        nextModule: d.uniqueSelector(q('.Card_title__3xK9a')),
        bem: d.uniqueSelector(q('.card__title')),
      }
    })
    expect(selectors.header).toBe('#top')
    expect(selectors.secondDup).not.toContain('#dup')
    expect(selectors.react).not.toContain(':r1:')
    expect(selectors.weird).toBe('#a\\:b\\.c')
    expect(selectors.save).toBe('button[data-testid="save"]')
    expect(selectors.search).toBe('input[aria-label="Search"]')
    expect(selectors.thirdBuy).toMatch(/button/)
    expect(selectors.classes).not.toMatch(/css-1x2y3z|sc-aXZVg/)
    expect(selectors.circle).toMatch(/circle:nth-of-type\(2\)$/)
    expect(selectors.link).toMatch(/li:nth-of-type\(3\) > a$/)
    // CSS modules' hashed names change with every build: Vite's (_name_hash_line) and css-loader's / Next.js's (File_name__hash).
    expect(selectors.viteModule).not.toMatch(/_1d1zu_/)
    expect(selectors.nextModule).not.toContain('3xK9a')
    // A BEM class is written by a person and stays.
    expect(selectors.bem).toContain('card__title')
  })

  it('describes an element within the store limits: path, tag, snippet, trimmed HTML, rect', async () => {
    const info = await page.evaluate(() => {
      const d = window.MarginaliaDescribe
      const long = d.describeElement(document.getElementById('long')!)
      const text = d.describeElement(document.getElementById('text')!)
      const buy = d.describeElement(document.querySelector('.card.special button')!)
      return { long, text, buy, fit: d.fitSelector(`${'div > '.repeat(500)}span`, 2000), tiny: d.trimmedHtml(document.getElementById('long')!, 100) }
    })
    expect(info.long.html!.length).toBeLessThanOrEqual(5000)
    expect(info.long.html).toMatch(/^<article id="long"><p>Lorem/)
    expect(info.long.html).toMatch(/<!-- … trimmed --><\/article>$/)
    expect(info.long.text!.length).toBeLessThanOrEqual(200)
    expect(info.long.text).toMatch(/…$/)
    expect(info.text.text).toMatch(/^Some text with spaces and more/)
    expect(info.buy).toMatchObject({ tag: 'button', text: 'Buy', html: '<button class="btn primary">Buy</button>' })
    expect(info.buy.path).toBe('html > body > main > section.cards > div.card > button.btn')
    expect(info.buy.rect).toMatchObject({ width: expect.any(Number), height: expect.any(Number) })
    expect(info.fit.length).toBeLessThanOrEqual(2000)
    expect(info.fit).toMatch(/^div > .* > span$/)
    expect(info.tiny.length).toBeLessThanOrEqual(100)
  })
})
