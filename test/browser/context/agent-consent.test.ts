/**
 * What an agent may see of a person's page, in real Chromium with real MCP clients: on a site
 * that is not a local dev origin (bank.test, mapped to loopback) an agent's `annotate` and
 * `capture` wait for the person's "Allow once / Always on this site / Deny"; a denial answers in
 * the thread and sends nothing of the element; "Always" is remembered. On every origin the
 * secrets of the page — typed values, hidden inputs, meta tokens, script contents, password
 * fields, masked subtrees — are redacted from the HTML and text sent, and painted over in the
 * screenshot (its pixels read).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Store } from '../../../src/index.js'
import type { Annotation } from '../../../src/store/model.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'
import { connect, structured } from '../../helpers/mcp.js'
import { decodePng } from '../../helpers/png.js'

const chromium = useChromium({ args: ['--host-resolver-rules=MAP bank.test 127.0.0.1'] })
const { enabled, cleanups } = chromium

const RED: [number, number, number] = [255, 0, 0]
/** MASK_COLOUR of src/browser/early/redact.ts. */
const MASK: [number, number, number] = [0x3d, 0x3d, 0x3d]
const SECRETS = ['CSRF-META-77', 'SCRIPT-SECRET-42', 'HIDDEN-CSRF-99', 'DE89370400440532013000', 'PASSWORD-ATTR-1', 'TYPED-SECRET', '078-05-1120', 'TEXTAREA-SECRET']

function fixture(server: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Transfer</title>
<meta name="csrf-token" content="CSRF-META-77"><script>window.KEY = "SCRIPT-SECRET-42"</script>
<style>body { margin: 0; padding: 30px; background: #fff; font: 16px sans-serif; }
form { width: 560px; padding: 10px; background: rgb(0, 160, 60); }
#ssn { width: 300px; height: 60px; margin: 10px 0; background: #fff; color: rgb(255, 0, 0); font: bold 40px sans-serif; }
#pw { width: 300px; height: 40px; background: rgb(255, 0, 0); color: rgb(255, 0, 0); border: 0; font: bold 30px monospace; }
#iban { width: 300px; height: 30px; }</style></head>
<body><form id="transfer" action="/transfer">
<input type="hidden" name="_csrf" value="HIDDEN-CSRF-99">
<label>IBAN <input id="iban" name="iban" value="DE89370400440532013000"></label>
<div data-private id="ssn">078-05-1120</div>
<input id="pw" type="password" value="PASSWORD-ATTR-1">
<textarea id="memo">TEXTAREA-SECRET</textarea>
<button id="send" type="submit">Send money</button>
</form>
<script src="${server}/overlay.js" data-screenshot-budget="10000"></script></body></html>`
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

async function setup(host: 'bank.test' | '127.0.0.1'): Promise<{ store: Store; page: Page; url: string; mcp: Awaited<ReturnType<typeof connect>> }> {
  let serverUrl = ''
  const pages = await servePages({ '/transfer': () => fixture(serverUrl) }, cleanups)
  const origin = pages.origin.replace('127.0.0.1', host)
  const { store, http } = await startMarginalia(cleanups, { allowOrigins: [origin] })
  serverUrl = http.url
  const { page } = await chromium.newPage({ viewport: { width: 1000, height: 700 } })
  const url = `${origin}/transfer`
  await page.goto(url)
  await page.fill('#iban', 'TYPED-SECRET')
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
  const mcp = await connect(store)
  cleanups.push(() => mcp.close())
  return { store, page, url, mcp }
}

function imageOf(result: CallToolResult): Buffer {
  const image = result.content.find((c) => c.type === 'image')
  if (!image || image.type !== 'image') throw new Error(`no image in ${JSON.stringify(result.content).slice(0, 300)}`)
  return Buffer.from(image.data, 'base64')
}

/** The colour, in a picture of `element` (16 px margin, 1:1), at the middle of `target`'s box. */
async function colourAt(page: Page, png: Buffer, element: string, target: string): Promise<[number, number, number]> {
  const img = decodePng(png)
  const box = (await page.locator(element).boundingBox())!
  const t = (await page.locator(target).boundingBox())!
  const x0 = Math.max(0, box.x - 16)
  const y0 = Math.max(0, box.y - 16)
  const [r, g, b] = img.pixel(Math.round(t.x + t.width / 2 - x0), Math.round(t.y + t.height / 2 - y0))
  return [r, g, b]
}

function expectRedacted(a: Annotation): void {
  const sent = JSON.stringify(a.element)
  for (const secret of SECRETS) expect(sent, secret).not.toContain(secret)
}

function keep(name: string, png: Buffer): void {
  const dir = process.env.MARGINALIA_SCREENSHOTS
  if (!dir) return
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, name), png)
}

describe.skipIf(!enabled)('what an agent may see of a page', () => {
  it('a person\'s annotation of a form sends its HTML and text redacted, and the screenshot painted over where the secrets are', { timeout: 60_000 }, async () => {
    const { store, page } = await setup('127.0.0.1')
    await ui(page, '.annotate').click()
    await page.locator('#transfer').click({ position: { x: 540, y: 5 } })
    await ui(page, '.composer textarea').fill('The transfer form is misaligned')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    const a = store.getAllPending()[0]!
    expect(a.element?.tag).toBe('form')
    expectRedacted(a)
    expect(a.element?.html).toContain('name="iban" value="[redacted]"')
    expect(a.element?.html).toContain('[masked]')
    expect(a.element?.html).toContain('Send money')
    const shot = a.attachments?.find((x) => x.kind === 'screenshot')
    expect(shot, 'a screenshot').toBeDefined()
    const png = Buffer.from((await store.blobs.get(shot!.sha256))!.bytes)
    keep('redacted-form.png', png)
    // The masked block and the password field were red; the picture shows the mask colour there, the form's green elsewhere.
    expect(await colourAt(page, png, '#transfer', '#ssn')).toEqual(MASK)
    expect(await colourAt(page, png, '#transfer', '#pw')).toEqual(MASK)
    expect(await colourAt(page, png, '#transfer', '#send')).not.toEqual(MASK)
    const img = decodePng(png)
    expect(img.pixel(30, 30).slice(0, 3)).toEqual([0, 160, 60])
    // Nothing red is left anywhere in the picture.
    let red = 0
    for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) {
      const [r, g, b] = img.pixel(x, y)
      if (r > 200 && g < 60 && b < 60) red++
    }
    expect(red).toBeLessThan(20) // the outline's anti-aliased corners at most
    expect(RED).not.toEqual(MASK)
  })

  it('on a site that is not a local dev origin, the agent sees nothing until the person allows it; Deny answers in the thread, Always is remembered', { timeout: 90_000 }, async () => {
    const { store, page, url, mcp } = await setup('bank.test')
    expect(new URL(page.url()).hostname).toBe('bank.test')

    // 1. annotate: the person is asked, and denies.
    const filed = await mcp.call('annotate', { url, selector: 'form#transfer', comment: 'What is in this form?' })
    expect(filed.isError, JSON.stringify(filed.content)).toBeFalsy()
    const { id } = structured<{ id: string }>(filed)
    const prompt = ui(page, '.consent')
    await prompt.waitFor({ timeout: 10_000 })
    expect(await prompt.textContent()).toContain('The agent asks to see form#transfer on bank.test')
    // While the question is open, nothing of the element has left the page.
    expect(store.getAnnotation(id).element?.html).toBeUndefined()
    await ui(page, '.consent-deny').click()
    await eventually(() => store.getAnnotation(id).replies.map((r) => r.message), 10_000).toEqual([expect.stringContaining('Declined: the person did not let the agent see form#transfer on bank.test')])
    expect(store.getAnnotation(id).element?.html).toBeUndefined()
    expect(JSON.stringify(store.getAnnotation(id))).not.toMatch(/078-05-1120|DE8937/)

    // 2. capture: asked again; "Always on this site" lets the picture go, painted over where the secrets are.
    const pending = mcp.call('capture', { id, timeoutMs: 30_000 })
    await prompt.waitFor({ timeout: 10_000 })
    await ui(page, '.consent-always').click()
    const shot = await pending
    expect(shot.isError, JSON.stringify(shot.content).slice(0, 300)).toBeFalsy()
    const png = imageOf(shot)
    keep('consented-capture.png', png)
    expect(await colourAt(page, png, '#transfer', '#ssn')).toEqual(MASK)
    expect(await colourAt(page, png, '#transfer', '#pw')).toEqual(MASK)
    expect(await page.evaluate(() => localStorage.getItem('marginalia:agent-may-see'))).toBe('always')

    // 3. Remembered: the next capture asks nothing.
    const again = await mcp.call('capture', { id, timeoutMs: 30_000 })
    expect(again.isError).toBeFalsy()
    expect(await prompt.count()).toBe(0)
    expectRedacted(store.getAnnotation(id))
  })
})
