/**
 * "Show, don't describe" in real Chromium: the element screenshot's pixels, pasted images, the
 * page log (console errors, failed requests) and the page's own console/fetch left as they were.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { type Store } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'
import { decodePng, solidPng } from '../../helpers/png.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/** The screenshot budget is 10 s here (data-screenshot-budget): a loaded test machine must not drop it by luck. */
function fixture(server: string, budget = 10_000): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Colours</title>
<style>body { margin: 0; padding: 40px; background: #ffffff; font: 16px sans-serif; } #target { width: 220px; height: 120px; background: rgb(0, 200, 100); color: #fff; }</style></head>
<body><div id="target" role="note" aria-label="Green box">Green</div><p>Other text</p>
<script src="${server}/overlay.js" data-screenshot-budget="${budget}"></script></body></html>`
}

async function setup(budget?: number): Promise<{ store: Store; page: Page; origin: string }> {
  const { store, http } = await startMarginalia(cleanups)
  const pages = await servePages({ '/colours': () => fixture(http.url, budget) }, cleanups)
  const { page } = await chromium.newPage({ viewport: { width: 1000, height: 700 } })
  await page.goto(`${pages.origin}/colours`)
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
  return { store, page, origin: pages.origin }
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

async function openComposer(page: Page, target: string): Promise<void> {
  if ((await ui(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await ui(page, '.annotate').click()
  await page.locator(target).first().click()
  await ui(page, '.composer textarea').waitFor()
}

/** Paste a PNG into `selector` (in the overlay's shadow root) as a person pasting from the clipboard would. */
async function pastePng(page: Page, selector: string, png: Buffer): Promise<void> {
  await ui(page, selector).evaluate((el, b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
    const dt = new DataTransfer()
    dt.items.add(new File([bytes], 'ref.png', { type: 'image/png' }))
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }))
  }, png.toString('base64'))
}

describe.skipIf(!enabled)('capture in Chromium', () => {
  it('an element annotation carries a screenshot whose pixels show the element, its styles, role and name', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    await openComposer(page, '#target')
    await ui(page, '.composer textarea').fill('Should be blue')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.element!.role).toBe('note')
    expect(a!.element!.accessibleName).toBe('Green box')
    expect(a!.element!.styles!['background-color']).toBe('rgb(0, 200, 100)')
    expect(a!.element!.styles!.width).toBe('220px')
    const shot = a!.attachments?.find((x) => x.kind === 'screenshot')
    expect(shot, 'a screenshot attachment').toBeDefined()
    expect(shot!.mime).toBe('image/png')
    expect(Math.max(shot!.width, shot!.height)).toBeLessThanOrEqual(1600)
    expect(shot!.bytes).toBeLessThanOrEqual(400 * 1024)
    const blob = await store.blobs.get(shot!.sha256)
    const img = decodePng(Buffer.from(blob!.bytes))
    const [r, g, b] = img.pixel(Math.floor(img.width / 2), Math.floor(img.height / 2) + Math.floor(img.height / 4))
    expect([r, g, b]).toEqual([0, 200, 100])
  })

  it('a screenshot that takes longer than the budget is left out, and the person is told why', { timeout: 60_000 }, async () => {
    const { store, page } = await setup(300)
    // The upload never answers: the budget (data-screenshot-budget="300") runs out, not luck.
    await page.route('**/api/attachments', () => {})
    await openComposer(page, '#target')
    await ui(page, '.composer textarea').fill('Should be blue')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    expect(store.getAllPending()[0]!.attachments ?? []).toEqual([])
    await eventually(() => ui(page, '.toast').first().textContent(), 10_000).toContain('without its screenshot: it took longer than 0.3 s (data-screenshot-budget on the script tag allows more).')
  })

  it('the screenshot toggle is remembered for the origin; off → no screenshot', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    await openComposer(page, '#target')
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    await ui(page, '.composer textarea').fill('no picture')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    expect(store.getAllPending()[0]!.attachments).toBeUndefined()
    await openComposer(page, '#target')
    expect(await ui(page, '.composer input[name="screenshot"]').isChecked()).toBe(false)
  })

  it('an image pasted into the composer is shown as a removable thumbnail and stored with the annotation', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    const png = solidPng(30, 20, [10, 20, 30])
    await openComposer(page, '#target')
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    await pastePng(page, '.composer textarea', png)
    await pastePng(page, '.composer textarea', solidPng(5, 5, [1, 1, 1]))
    await eventually(() => ui(page, '.composer .image-tray .thumb').count()).toBe(2)
    await ui(page, '.composer .image-tray .thumb .remove').nth(1).click()
    expect(await ui(page, '.composer .image-tray .thumb').count()).toBe(1)
    await ui(page, '.composer textarea').fill('like this')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    const [att] = store.getAllPending()[0]!.attachments!
    expect(att).toMatchObject({ kind: 'image', mime: 'image/png', width: 30, height: 20 })
    expect(Buffer.from((await store.blobs.get(att!.sha256))!.bytes).equals(png)).toBe(true)
  })

  it('a page that logged an error and had a failing fetch: both entries come with the annotation; console.error and fetch behave as before', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    const consoleMessages: string[] = []
    page.on('console', (m) => consoleMessages.push(`${m.type()}:${m.text()}`))
    const behaviour = await page.evaluate(async () => {
      const returned = console.error('Boom: cart is undefined')
      const p = fetch('/missing?token=s3cr3t&page=2')
      const isPromise = p instanceof Promise
      const status = (await p).status
      let thrown = ''
      try {
        await fetch('http://127.0.0.1:1/unreachable')
      } catch (e) {
        thrown = `${(e as Error).name}`
      }
      return { returned: returned === undefined, isPromise, status, thrown }
    })
    expect(behaviour).toEqual({ returned: true, isPromise: true, status: 404, thrown: 'TypeError' })
    expect(consoleMessages).toContain('error:Boom: cart is undefined')
    await openComposer(page, '#target')
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    await ui(page, '.composer textarea').fill('broken')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    const entries = store.getAllPending()[0]!.context!.entries
    const error = entries.find((e) => e.kind === 'console.error')
    expect(error?.message).toBe('Boom: cart is undefined')
    const failed = entries.filter((e) => e.kind === 'network')
    expect(failed.map((e) => e.status)).toEqual([404, 0])
    expect(failed[0]!.url).toContain('/missing?token=REDACTED&page=2')
    expect(failed[0]!.url).not.toContain('s3cr3t')
    expect(failed[0]!.method).toBe('GET')
    expect(failed[0]!.durationMs).toBeGreaterThanOrEqual(0)
  })

  it('the page-log toggle (the opt-out): off → no log goes with the annotation, remembered for the origin; on again → it does', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    await page.evaluate(() => console.error('Boom: private detail'))
    await openComposer(page, '#target')
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    expect(await ui(page, '.composer input[name="page-log"]').isChecked()).toBe(true)
    await ui(page, '.composer input[name="page-log"]').uncheck({ force: true })
    await ui(page, '.composer textarea').fill('no log please')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    expect(store.getAllPending()[0]!.context).toBeUndefined()
    expect(await page.evaluate(() => localStorage.getItem('marginalia:page-log'))).toBe('off')

    // Remembered after a reload: the box starts unchecked and the page's console is left alone.
    await page.reload()
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
    await openComposer(page, '#target')
    expect(await ui(page, '.composer input[name="page-log"]').isChecked()).toBe(false)
    await ui(page, '.composer input[name="page-log"]').check({ force: true })
    await ui(page, '.composer button:has-text("Cancel")').click()
    await page.evaluate(() => console.error('Boom: after turning it on'))
    await openComposer(page, '#target')
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    await ui(page, '.composer textarea').fill('with the log')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(2)
    const withLog = store.getAllPending().find((a) => a.comment === 'with the log')!
    expect(withLog.context?.entries.map((e) => e.message)).toEqual(['Boom: after turning it on'])
  })

  it('the thread panel shows the screenshot and the page log; an image pasted into a reply is stored with it', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    await page.evaluate(() => {
      console.warn('Deprecated prop "size" on <Card>')
      void fetch('/api/cart?session=abc').catch(() => {})
    })
    await openComposer(page, '#target')
    await ui(page, '.composer textarea').fill('This box should be blue, like the reference')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await ui(page, '.pin').click()
    await ui(page, '.thread .attachments .thumb').waitFor()
    await eventually(() => ui(page, '.thread .attachments img').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0)
    expect(await ui(page, '.thread .page-log summary').textContent()).toBe('1 console entry, 1 failed request')
    const reference = solidPng(40, 24, [40, 90, 220])
    await pastePng(page, '.thread textarea', reference)
    await eventually(() => ui(page, '.thread .image-tray .thumb').count()).toBe(1)
    await ui(page, '.thread textarea').fill('Here is the blue I mean')
    if (process.env.MARGINALIA_DOC_SCREENSHOTS) {
      await ui(page, '.thread .page-log summary').click()
      await page.screenshot({ path: path.resolve(import.meta.dirname, '../../../docs/screenshots/thread-panel-images.png') })
    }
    await ui(page, '.thread button[type="submit"]').click()
    await eventually(() => store.getAllPending()[0]!.replies.length, 10_000).toBe(1)
    const reply = store.getAllPending()[0]!.replies[0]!
    expect(reply.attachments).toHaveLength(1)
    expect(Buffer.from((await store.blobs.get(reply.attachments![0]!.sha256))!.bytes).equals(reference)).toBe(true)
    await eventually(() => ui(page, '.thread .reply .attachments .thumb').count()).toBe(1)
    // Click to enlarge, click to close.
    await ui(page, '.thread .attachments .thumb').first().click()
    await ui(page, '.lightbox img').waitFor()
    await ui(page, '.lightbox').click()
    expect(await ui(page, '.lightbox').count()).toBe(0)
  })
  it('on a long page the screenshot reads the styles of what is in view, not of the rows below it; the element is drawn', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const rows = Array.from({ length: 3000 }, (_, i) => `<tr><td>${i}</td><td>Item ${i}</td><td>${i * 3} €</td></tr>`).join('')
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders</title>
<style>body { margin: 0; padding: 40px; background: #fff; font: 16px sans-serif; } #target { width: 220px; height: 120px; background: rgb(0, 200, 100); } td { padding: 2px 8px; }</style></head>
<body><div id="target" role="note" aria-label="Green box">Green</div><table><tbody>${rows}</tbody></table>
<script src="${http.url}/overlay.js" data-screenshot-budget="30000"></script></body></html>`
    const pages = await servePages({ '/orders': html }, cleanups)
    const { page } = await chromium.newPage({ viewport: { width: 1000, height: 700 } })
    // Counts the page's style reads from the moment Send is pressed (window.__count set then).
    await page.addInitScript(() => {
      const w = window as unknown as { __styleReads?: number; __count?: boolean }
      const original = window.getComputedStyle.bind(window)
      window.getComputedStyle = (el: Element, pseudo?: string | null) => {
        if (w.__count) w.__styleReads = (w.__styleReads ?? 0) + 1
        return original(el, pseudo)
      }
    })
    await page.goto(`${pages.origin}/orders`)
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
    await openComposer(page, '#target')
    await ui(page, '.composer textarea').fill('Should be blue')
    await page.evaluate(() => ((window as unknown as { __count: boolean }).__count = true))
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 60_000).toBe(1)
    const shot = store.getAllPending()[0]!.attachments?.find((x) => x.kind === 'screenshot')
    expect(shot, 'a screenshot attachment').toBeDefined()
    const reads = await page.evaluate(() => (window as unknown as { __styleReads?: number }).__styleReads ?? 0)
    // 3 000 rows of 4 elements are 12 000 elements; about 25 rows are in view.
    expect(reads).toBeLessThan(2_000)
    const img = decodePng(Buffer.from((await store.blobs.get(shot!.sha256))!.bytes))
    const [r, g, b] = img.pixel(Math.floor(img.width / 2), Math.floor(img.height / 2) + Math.floor(img.height / 4))
    expect([r, g, b]).toEqual([0, 200, 100])
  })
})
