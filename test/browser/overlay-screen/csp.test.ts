/**
 * A strict Content-Security-Policy: `script-src 'self'; style-src 'self'; connect-src
 * 'self'`, sent as a header. Served through the app's own origin (the Vite plugin's `sameOrigin`)
 * the overlay works: styled without inline styles, connected, an annotation sent. Loaded from the
 * page's origin but talking to the server on another port, it says which directive blocks it and
 * what to add — not "Server unreachable".
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { testDir } from '../../helpers/store.js'
import { startVite } from '../../helpers/vite.js'
import { annotateMode, ui } from '../overlay-anchor/setup.js'
import { decodePng } from '../../helpers/png.js'
import { startMarginalia } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'"
const OVERLAY_DIR = path.resolve(import.meta.dirname, '../../../dist/overlay')
const OVERLAY_JS = path.join(OVERLAY_DIR, 'overlay.js')

/** overlay.js and its chunks copied into the page's own origin ('self'), as a self-hosted page serves them; false for any other path. */
function selfHosted(url: string | undefined, res: ServerResponse, overlay: Buffer): boolean {
  if (url === '/overlay.js') {
    res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(overlay)
    return true
  }
  const chunk = /^\/chunks\/([\w-]+\.js)(?:\?.*)?$/.exec(url ?? '')?.[1]
  if (!chunk || !existsSync(path.join(OVERLAY_DIR, 'chunks', chunk))) return false
  res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(readFileSync(path.join(OVERLAY_DIR, 'chunks', chunk)))
  return true
}

const body = (script: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Strict</title></head>
<body><main><h1>Billing</h1><button id="pay" type="button">Pay now</button></main>${script}</body></html>`

/** Every CSP violation the page sees, recorded before any page script runs. */
async function recordViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { violations: string[] }
    w.violations = []
    document.addEventListener('securitypolicyviolation', (e) => w.violations.push(`${e.effectiveDirective} ${e.blockedURI} from ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`), true)
  })
}
const violations = (page: Page) => page.evaluate(() => (window as unknown as { violations: string[] }).violations)

/** The toolbar as the browser computes it: the overlay's own dark pill, not a default <div>. */
const barStyle = (page: Page) =>
  page.evaluate(() => {
    const bar = document.querySelector('marginalia-overlay')!.shadowRoot!.querySelector('.bar')!
    const s = getComputedStyle(bar)
    return { background: s.backgroundColor, radius: s.borderRadius, display: s.display }
  })

describe.skipIf(!enabled)('the overlay under a strict Content-Security-Policy', () => {
  it('names the directive and the value to add when connect-src blocks the server, and is styled without inline styles', { timeout: 60_000 }, async () => {
    const { http } = await startMarginalia(cleanups)
    // The page's own server: the overlay script from its own origin ('self'), the API on the Marginalia port.
    const overlay = readFileSync(OVERLAY_JS)
    const server: Server = createHttpServer((req, res) => {
      if (selfHosted(req.url, res, overlay)) return
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': CSP }).end(body(`<script src="/overlay.js" data-server="${http.url}" data-screenshot-budget="10000" defer></script>`))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))))
    const { page } = await chromium.newPage()
    await recordViolations(page)
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/billing`)

    const message = `This page's Content-Security-Policy blocks Marginalia: add ${http.url} to connect-src.`
    await eventually(() => ui(page, '.alert').textContent()).toContain(message)
    expect(await ui(page, '.agent').textContent()).toBe('Blocked by CSP')
    expect(await barStyle(page)).toEqual({ background: 'rgb(15, 23, 42)', radius: '999px', display: 'flex' })
    // What was blocked is the server, under connect-src; nothing of the overlay's styles.
    const seen = await violations(page)
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.filter((v) => !v.startsWith(`connect-src ${http.url}/`))).toEqual([])
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/csp-blocked.png' })
  })

  it('works through the Vite dev server\'s own origin with sameOrigin: true — styled, connected, an annotation sent', { timeout: 90_000 }, async () => {
    const { dir: root } = testDir(cleanups, 'marginalia-csp-')
    writeFileSync(path.join(root, 'index.html'), body('<script type="module" src="/main.js"></script>'))
    writeFileSync(path.join(root, 'main.js'), "document.querySelector('h1').dataset.ready = '1'\n")
    const plugin = marginalia({ port: 0, sameOrigin: true })
    const vite = await startVite(cleanups, root, [plugin], { headers: { 'Content-Security-Policy': CSP } })
    const origin = `http://127.0.0.1:${(vite.httpServer!.address() as AddressInfo).port}`
    const { page } = await chromium.newPage()
    await recordViolations(page)
    await page.goto(`${origin}/`)

    expect(await page.locator('script[data-marginalia]').getAttribute('src')).toBe('/__marginalia/overlay.js')
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 20_000 })
    expect(await page.evaluate(() => window.Marginalia?.server)).toBe(`${origin}/__marginalia`)
    expect(await barStyle(page)).toEqual({ background: 'rgb(15, 23, 42)', radius: '999px', display: 'flex' })

    await ui(page, '.annotate').click()
    await page.locator('#pay').click()
    await ui(page, '.composer textarea').fill('Say how much')
    // Screenshots are drawn from a data: image, which this policy blocks (the next test): off here.
    await ui(page, '.composer input[name="screenshot"]').uncheck()
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    // Stored on the plugin's Marginalia server, straight from there.
    const listed = (await (await fetch(`${(await plugin.ready())!.url}/api/annotations`)).json()) as { annotations: { comment: string }[] }
    expect(listed.annotations.map((a) => a.comment)).toEqual(['Say how much'])
    expect(await ui(page, '.alert').isVisible()).toBe(false)
    expect(await violations(page)).toEqual([])
  })

  it('with Screenshot ticked: a policy that blocks data: images gets the annotation without a picture and says what to add; one that allows them, or none, gets a real picture', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const overlay = readFileSync(OVERLAY_JS)
    // The page may talk to the server; images fall back to default-src 'self' (no data:), inline styles are blocked.
    const strict = `default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self' ${http.url}`
    const policies: Record<string, string | undefined> = { '/strict': strict, '/strict-data': `${strict}; img-src 'self' data:`, '/open': undefined }
    const server: Server = createHttpServer((req, res) => {
      if (selfHosted(req.url, res, overlay)) return
      if (req.url === '/app.css') res.writeHead(200, { 'Content-Type': 'text/css' }).end('body{margin:0;padding:40px;background:#fff;font:16px sans-serif} #pay{display:block;width:220px;height:90px;border:0;background:rgb(0,200,100);color:#fff}')
      else {
        const policy = policies[req.url ?? '']
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...(policy ? { 'Content-Security-Policy': policy } : {}) })
        res.end(body(`<link rel="stylesheet" href="/app.css"><script src="/overlay.js" data-server="${http.url}" data-screenshot-budget="10000" defer></script>`))
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const { page } = await chromium.newPage()
    await recordViolations(page)

    /** Annotate #pay on `path` with Screenshot ticked (the default) and send; the stored annotation. */
    const annotate = async (path: string, comment: string) => {
      await page.goto(`${origin}${path}`)
      await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 20_000 })
      await ui(page, '.annotate').click()
      await page.locator('#pay').click()
      await ui(page, '.composer textarea').fill(comment)
      expect(await ui(page, '.composer input[name="screenshot"]').isChecked()).toBe(true)
      // Nothing known about the policy before the first capture: nothing said.
      expect(await ui(page, '.composer .shot-note').isVisible()).toBe(false)
      await ui(page, '.composer button[type="submit"]').click()
      await eventually(() => store.getAllPending().find((a) => a.comment === comment) !== undefined).toBe(true)
      return store.getAllPending().find((a) => a.comment === comment)!
    }
    /** The stored screenshot's pixel in the button, below its label: the button's green, not blank. */
    const buttonPixel = async (a: { attachments?: { kind: string; sha256: string }[] | undefined }) => {
      const shot = a.attachments?.find((x) => x.kind === 'screenshot')
      expect(shot, 'a screenshot attachment').toBeDefined()
      const img = decodePng(Buffer.from((await store.blobs.get(shot!.sha256))!.bytes))
      return img.pixel(Math.floor(img.width / 2), Math.floor(img.height / 2) + Math.floor(img.height / 4)).slice(0, 3)
    }

    // default-src 'self' blocks the data: image the picture is drawn from: sent without it, and said so.
    const blocked = await annotate('/strict', 'Say the amount')
    expect(blocked.attachments ?? []).toEqual([])
    // The store has it before the browser has the server's answer: the toast follows that answer.
    await eventually(() => ui(page, '.toast').textContent()).toBe("Sent as #1 without its screenshot: this page's Content-Security-Policy blocks it (add data: to default-src).")
    // The next box on this page says it before Send, while Screenshot is ticked.
    await annotateMode(page)
    await page.locator('h1').click()
    await ui(page, '.composer textarea').waitFor()
    expect(await ui(page, '.composer .shot-note').textContent()).toBe("This page's Content-Security-Policy blocks the screenshot: add data: to default-src.")
    expect(await ui(page, '.composer .shot-note').isVisible()).toBe(true)
    await page.screenshot({ path: 'test/browser/overlay-screen/.screenshots/csp-screenshot-blocked.png' })
    await ui(page, '.composer input[name="screenshot"]').uncheck()
    expect(await ui(page, '.composer .shot-note').isVisible()).toBe(false)
    await ui(page, '.composer input[name="screenshot"]').check()
    await ui(page, '.composer button:has-text("Cancel")').click()
    // What the page's policy saw: the data: image refused and a <style> element (fonts) refused; nothing of the server.
    expect(new Set((await violations(page)).map((v) => v.split(' from ')[0]))).toEqual(new Set(['img-src data', 'style-src-elem inline']))
    expect(await ui(page, '.agent').textContent()).not.toBe('Blocked by CSP')

    // img-src allows data: (inline styles still blocked): a real picture of the button, and no word about it.
    const drawn = await annotate('/strict-data', 'Bigger label')
    expect(await buttonPixel(drawn)).toEqual([0, 200, 100])
    await eventually(() => ui(page, '.toast').textContent()).toMatch(/^Sent as #\d+\. /)

    // No policy at all: a picture, as ever.
    const open = await annotate('/open', 'Round corners')
    expect(await buttonPixel(open)).toEqual([0, 200, 100])
    await eventually(() => ui(page, '.toast').textContent()).toMatch(/^Sent as #\d+\. /)
  })
})
