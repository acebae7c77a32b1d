/**
 * Shortcuts: the annotate shortcut is Alt+Shift+A unless configured (the script tag's
 * data-shortcut, which the Vite plugin's `shortcut` option sets); no shortcut fires while the
 * person types in an input, a textarea or a contenteditable editor; the shortcut and Esc work
 * while focus is inside a same-origin iframe (one there at load, one added later and entered from
 * another frame, one nested).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createLogger, createServer } from 'vite'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { openPage, setup, ui } from '../overlay-anchor/setup.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Form</title></head>
<body style="margin:0;padding:40px;font:14px sans-serif">
<input id="name"> <textarea id="notes"></textarea> <div id="editor" contenteditable="true" style="border:1px solid #999;min-height:30px">Edit me</div>
<button id="save">Save</button>
<iframe id="embed" src="/inner" style="width:400px;height:120px"></iframe>
{{overlay}}</body></html>`
const INNER = `<!doctype html><html><body><button id="pay">Pay</button> <input id="card"></body></html>`

const annotating = (page: Page) => ui(page, '.annotate').getAttribute('aria-pressed')

describe.skipIf(!enabled)('shortcuts', () => {
  it('Alt+Shift+A toggles annotate mode, never while typing; it and Esc work from inside a same-origin iframe', { timeout: 90_000 }, async () => {
    const { page } = await setup(chromium.browser, cleanups, { '/form': PAGE, '/inner': INNER }, '/form')
    expect(await ui(page, '.annotate').getAttribute('aria-keyshortcuts')).toBe('Alt+Shift+A')
    await page.locator('#save').focus()
    await page.keyboard.press('Alt+Shift+A')
    // Annotate mode comes in a chunk: the first press fetches it, then turns it on.
    await eventually(() => annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')

    // Typing: an input, a textarea, a contenteditable editor.
    for (const field of ['#name', '#notes', '#editor']) {
      await page.locator(field).focus()
      await page.keyboard.press('Alt+Shift+A')
      expect(await annotating(page), field).toBe('false')
    }

    // Focus inside the iframe: the shortcut turns annotate mode on, Esc turns it off.
    const frame = page.frameLocator('#embed')
    await frame.locator('#pay').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')
    // …but not while typing in the iframe's input.
    await frame.locator('#card').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('false')

    // An iframe that navigates (a new document) is heard again.
    await page.locator('#embed').evaluate((f: HTMLIFrameElement) => new Promise((r) => {
      f.addEventListener('load', r, { once: true })
      f.src = '/inner?again'
    }))
    await frame.locator('#pay').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')

    // An iframe the page adds later, and one inside it: heard once focus goes into them.
    await page.locator('#save').focus()
    await page.evaluate(() => new Promise((r) => {
      const f = document.createElement('iframe')
      f.id = 'later'
      f.srcdoc = '<button id="outer">Outer</button><iframe id="nested" srcdoc="<button id=inner>Inner</button>"></iframe>'
      f.addEventListener('load', r, { once: true })
      document.body.append(f)
    }))
    const later = page.frameLocator('#later')
    // From one frame straight into another: the top window is not blurred again, the frame left is.
    await frame.locator('#pay').focus()
    await later.locator('#outer').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')
    await later.frameLocator('#nested').locator('#inner').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')
  })

  it('works with the steps recorder turned off for the origin (the overlay listens itself)', { timeout: 60_000 }, async () => {
    const { page, pages } = await setup(chromium.browser, cleanups, { '/form': PAGE, '/inner': INNER }, '/form')
    await page.evaluate(() => localStorage.setItem('marginalia:steps', 'off'))
    await openPage(page, `${pages.origin}/form`)
    expect(await page.evaluate(() => Boolean((window as unknown as Record<symbol, unknown>)[Symbol.for('marginalia.steps')]))).toBe(false)
    await page.locator('#save').focus()
    await page.keyboard.press('Alt+Shift+A')
    await eventually(() => annotating(page)).toBe('true')
    await page.keyboard.press('Escape')
    expect(await annotating(page)).toBe('false')
  })

  it("takes the Vite plugin's shortcut option (the script tag's data-shortcut)", { timeout: 120_000 }, async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'marginalia-shortcut-'))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    writeFileSync(path.join(root, 'index.html'), '<!doctype html><html><head><title>App</title></head><body><button id="go">Go</button><input id="q"></body></html>')
    const logger = createLogger('silent')
    const vite = await createServer({
      root,
      configFile: false,
      customLogger: logger,
      logLevel: 'silent',
      clearScreen: false,
      cacheDir: path.join(root, '.vite-cache'),
      plugins: [marginalia({ port: 0, shortcut: 'ctrl+alt+m' })],
      server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
      optimizeDeps: { noDiscovery: true, include: [] },
    })
    cleanups.push(() => vite.close())
    await vite.listen()
    const { port } = vite.httpServer!.address() as AddressInfo
    const { page } = await chromium.newPage()
    await openPage(page, `http://127.0.0.1:${port}/`)
    expect(await page.locator('script[data-marginalia]').getAttribute('data-shortcut')).toBe('ctrl+alt+m')
    expect(await ui(page, '.annotate').getAttribute('aria-keyshortcuts')).toBe('Ctrl+Alt+M')
    await page.locator('#go').focus()
    await page.keyboard.press('Alt+Shift+A')
    expect(await annotating(page)).toBe('false')
    await page.keyboard.press('Control+Alt+KeyM')
    await eventually(() => annotating(page)).toBe('true')
    await page.keyboard.press('Control+Alt+KeyM')
    expect(await annotating(page)).toBe('false')
    await page.locator('#q').focus()
    await page.keyboard.press('Control+Alt+KeyM')
    expect(await annotating(page)).toBe('false')
  })
})
