/**
 * The redaction module in Chromium: src/browser/early/redact.ts bundled on the fly and run on a
 * page holding every kind of secret — typed values, value attributes, hidden inputs, meta tokens,
 * script contents, password and card fields, masked subtrees — checked in HTML, text and the
 * areas a screenshot paints over.
 */
import path from 'node:path'
import { build } from 'esbuild'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'

const chromium = useChromium()
const { enabled } = chromium
let page: Page

const FIXTURE = `<!doctype html><html><head><title>Bank</title>
<meta name="viewport" content="width=device-width">
<meta name="csrf-token" content="CSRF-META-77">
<script nonce="NONCE-123">window.API_KEY = "SCRIPT-SECRET-42"</script></head>
<body>
<form id="transfer" action="/transfer">
  <input type="hidden" name="_csrf" value="HIDDEN-CSRF-99">
  <label>IBAN <input id="iban" name="iban" value="DE89370400440532013000"></label>
  <label>Password <input id="pw" type="password" value="PASSWORD-ATTR-1"></label>
  <label>Card <input id="card" autocomplete="cc-number" value="4111111111111111"></label>
  <label>Code <input id="otp" autocomplete="one-time-code"></label>
  <textarea id="note">TEXTAREA-DEFAULT</textarea>
  <input type="checkbox" id="agree" checked>
  <select id="currency"><option>EUR</option><option selected>USD</option></select>
  <button type="submit">Send money</button><input type="submit" value="Confirm">
  <p>Visible help text</p>
  <div data-private id="ssn-box">SSN 078-05-1120 <span>nested</span></div>
  <div class="sensitive" id="balance">Balance 1,234,567</div>
  <section data-marginalia-mask id="masked" data-account="ACCOUNT-ATTR"><p>MASKED-TEXT</p><input value="MASKED-INPUT"></section>
</form>
<p id="plain">Just <b>words</b> here</p>
</body></html>`

/** The secrets of the fixture: none may appear in any redacted output. */
const SECRETS = ['CSRF-META-77', 'NONCE-123', 'SCRIPT-SECRET-42', 'HIDDEN-CSRF-99', 'DE89370400440532013000', 'PASSWORD-ATTR-1', '4111111111111111', 'TEXTAREA-DEFAULT', '078-05-1120', 'nested', '1,234,567', 'MASKED-TEXT', 'MASKED-INPUT', 'ACCOUNT-ATTR', 'TYPED-IBAN', 'TYPED-PW', 'TYPED-NOTE', 'TYPED-OTP']

interface Redact {
  isSensitiveElement(el: Element): boolean
  redactedClone(el: Element): Element
  redactText(el: Element): string
  maskRects(root?: ParentNode, exclude?: Element): DOMRect[]
  redactUrl(raw: string): string
  describeLogged(value: unknown): string | undefined
}
declare global {
  interface Window {
    MarginaliaRedact: Redact
  }
}

beforeAll(async () => {
  if (!enabled) return
  const bundle = await build({
    entryPoints: [path.resolve(import.meta.dirname, '../../../src/browser/early/redact.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'MarginaliaRedact',
    write: false,
    platform: 'browser',
  })
  page = await chromium.browser.newPage()
  await page.setContent(FIXTURE)
  // What a person typed lives in the fields' properties, not in the HTML.
  await page.fill('#iban', 'TYPED-IBAN')
  await page.fill('#pw', 'TYPED-PW')
  await page.fill('#note', 'TYPED-NOTE')
  await page.fill('#otp', 'TYPED-OTP')
  await page.addScriptTag({ content: bundle.outputFiles[0]!.text })
}, 60_000)

describe.skipIf(!enabled)('redaction in Chromium', () => {
  it('names the sensitive elements: password, card and one-time-code fields, hidden inputs, masked subtrees', async () => {
    const verdicts = await page.evaluate(() => {
      const r = window.MarginaliaRedact
      const ids = ['pw', 'card', 'otp', 'iban', 'note', 'agree', 'ssn-box', 'balance', 'masked', 'plain', 'transfer']
      const out: Record<string, boolean> = Object.fromEntries(ids.map((id) => [id, r.isSensitiveElement(document.getElementById(id)!)]))
      out.hidden = r.isSensitiveElement(document.querySelector('input[type=hidden]')!)
      out.nestedSpan = r.isSensitiveElement(document.querySelector('#ssn-box span')!)
      out.maskedInput = r.isSensitiveElement(document.querySelector('#masked input')!)
      return out
    })
    expect(verdicts).toEqual({
      pw: true, card: true, otp: true, hidden: true, 'ssn-box': true, balance: true, masked: true, nestedSpan: true, maskedInput: true,
      iban: false, note: false, agree: false, plain: false, transfer: false,
    })
  })

  it('redacts every kind of secret from the HTML and keeps the structure an agent needs', async () => {
    const { form, whole } = await page.evaluate(() => ({
      form: window.MarginaliaRedact.redactedClone(document.getElementById('transfer')!).outerHTML,
      whole: window.MarginaliaRedact.redactedClone(document.documentElement).outerHTML,
    }))
    for (const html of [form, whole]) for (const secret of SECRETS) expect(html, secret).not.toContain(secret)
    // The structure stays: the form, its field names, labels, buttons, the placeholder where masked.
    expect(form).toContain('<form id="transfer" action="/transfer">')
    expect(form).toContain('name="iban" value="[redacted]"')
    expect(form).toContain('type="hidden" name="_csrf" value="[redacted]"')
    expect(form).toContain('<textarea id="note">[redacted]</textarea>')
    expect(form).toContain('Send money')
    expect(form).toContain('value="Confirm"')
    expect(form).toContain('Visible help text')
    expect(form.match(/\[masked\]/g)?.length).toBe(6) // ssn, balance, section, password, card, one-time code
    expect(whole).toContain('<meta name="viewport" content="width=device-width">')
    expect(whole).toContain('<meta name="csrf-token" content="[redacted]">')
    expect(whole).toContain('<script nonce="[redacted]"></script>')
    // The page itself is untouched.
    const still = await page.evaluate(() => [
      (document.getElementById('iban') as HTMLInputElement).value,
      document.querySelector('meta[name=csrf-token]')!.getAttribute('content'),
      document.getElementById('ssn-box')!.textContent,
    ])
    expect(still).toEqual(['TYPED-IBAN', 'CSRF-META-77', 'SSN 078-05-1120 nested'])
  })

  it('redacts the text: masked subtrees become [masked], textareas are left out, other text stays', async () => {
    const text = await page.evaluate(() => ({
      form: window.MarginaliaRedact.redactText(document.getElementById('transfer')!),
      body: window.MarginaliaRedact.redactText(document.body),
      ssn: window.MarginaliaRedact.redactText(document.querySelector('#ssn-box span')!),
      note: window.MarginaliaRedact.redactText(document.getElementById('note')!),
      plain: window.MarginaliaRedact.redactText(document.getElementById('plain')!),
    }))
    for (const t of [text.form, text.body, text.ssn, text.note]) for (const secret of SECRETS) expect(t, secret).not.toContain(secret)
    expect(text.form).toContain('Visible help text')
    expect(text.form).toContain('IBAN')
    expect(text.form).toContain('[masked]')
    expect(text.ssn).toBe('[masked]')
    expect(text.note).toBe('[redacted]')
    expect(text.plain).toBe('Just words here')
  })

  it('lists the areas a screenshot paints over: masked subtrees, secret fields even when empty, fields holding typing', async () => {
    const { rects, expected, exclusive } = await page.evaluate(() => {
      const box = (id: string) => {
        const r = document.getElementById(id)!.getBoundingClientRect()
        return [r.x, r.y, r.width, r.height].map(Math.round).join(',')
      }
      const rects = window.MarginaliaRedact.maskRects(document).map((r) => [r.x, r.y, r.width, r.height].map(Math.round).join(','))
      // Emptied: the IBAN no longer holds typing and is no longer painted over; the one-time code is, empty or not.
      ;(document.getElementById('iban') as HTMLInputElement).value = ''
      ;(document.getElementById('otp') as HTMLInputElement).value = ''
      const after = window.MarginaliaRedact.maskRects(document).map((r) => [r.x, r.y, r.width, r.height].map(Math.round).join(','))
      ;(document.getElementById('iban') as HTMLInputElement).value = 'TYPED-IBAN'
      ;(document.getElementById('otp') as HTMLInputElement).value = 'TYPED-OTP'
      return { rects, expected: ['iban', 'pw', 'card', 'otp', 'note', 'ssn-box', 'balance', 'masked'].map(box), exclusive: { iban: after.includes(box('iban')), otp: after.includes(box('otp')) } }
    })
    expect(rects.sort()).toEqual(expected.sort())
    expect(exclusive).toEqual({ iban: false, otp: true })
  })

  it('redacts URLs and logged elements for the page log', async () => {
    const out = await page.evaluate(() => ({
      url: window.MarginaliaRedact.redactUrl('https://user:pw@bank.test/api?token=abc&q=shoes&session_id=s1'),
      logged: window.MarginaliaRedact.describeLogged(document.getElementById('pw')),
      hidden: window.MarginaliaRedact.describeLogged(document.querySelector('input[type=hidden]')),
      other: window.MarginaliaRedact.describeLogged('a string'),
    }))
    expect(out.url).toBe('https://bank.test/api?token=REDACTED&q=shoes&session_id=REDACTED')
    expect(out.logged).toBe('<input id="pw" type="password">')
    expect(out.hidden).toBe('<input name="_csrf" type="hidden">')
    expect(out.other).toBeUndefined()
  })
})
