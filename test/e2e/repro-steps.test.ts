/**
 * Steps to reproduce, end to end in real Chromium: a person signs in with a password on a shop
 * (head snippet: the recorder runs from the page's first line), adds the Chair to the cart, goes to
 * /cart by a client-side route, types a coupon and a private gift message, presses Apply (a
 * fetch), then annotates the wrong total. The steps arrive in order with the annotation (one
 * dropped in the composer stays out); the password and the private message are found nowhere —
 * not in the store's files, the attachments, the server's log, the Markdown, the agent's answer or
 * the generated test; and the generated test, written by `marginalia repro` and by
 * `GET /api/annotations/:id/repro` alike, passes under `@playwright/test` against the running app,
 * whose server sees the replayed coupon request.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { PlaywrightTestConfig } from '@playwright/test'
import { openStore, startHttpServer } from '../../src/index.js'
import { headSnippet } from '../../src/integrations/shared/loader-script.js'
import { annotationToMarkdown } from '../../src/browser/shared/markdown.js'
import { chromiumPath, useChromium } from '../helpers/chromium.js'
import type { Cleanups } from '../helpers/cleanup.js'
import { runCli } from '../helpers/cli.js'
import { eventually } from '../helpers/eventually.js'
import { connect } from '../helpers/mcp.js'
import { testDir } from '../helpers/store.js'
import { listenOnLoopback } from '../helpers/page.js'

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/** A real mouse click in the middle of `box` (Playwright's own click refuses an element the overlay covers). */
async function clickAt(page: Page, box: { x: number; y: number; width: number; height: number } | null): Promise<void> {
  if (!box) throw new Error('no box to click')
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
}

const chromium = useChromium()
const { enabled, cleanups } = chromium
const ROOT = path.resolve(import.meta.dirname, '../..')

const PASSWORD = 'hunter2-PASSWORD-x9'
const GIFT = 'TOP-SECRET-GIFT-q7'
const NOTES = 'MASKED-DELIVERY-NOTE-k3'

const STYLE = '<style>body{font:16px system-ui;margin:24px} li{margin:6px 0} .row{display:flex;gap:12px;align-items:center}</style>'

function signInPage(snippet: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title>${snippet}${STYLE}</head><body>
<h1>Sign in</h1>
<form id="signin" aria-label="Sign in">
  <p><label for="email">Email</label> <input id="email" type="email" autocomplete="username"></p>
  <p><label for="password">Password</label> <input id="password" type="password" autocomplete="current-password"></p>
  <input type="hidden" name="csrf" value="csrf-HIDDEN-VALUE">
  <button type="submit">Sign in</button>
</form>
<script>
document.getElementById('signin').addEventListener('submit', async (e) => {
  e.preventDefault()
  if (!document.getElementById('password').value) return
  await fetch('/api/signin', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: document.getElementById('email').value }) })
  location.assign('/shop')
})
</script></body></html>`
}

/** The shop: a list and a cart, one page whose views change by pushState. */
function shopPage(snippet: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${snippet}${STYLE}</head><body>
<nav><a href="/shop" data-route>Shop</a> · <a href="/cart" data-route>Cart</a></nav>
<main id="view"></main>
<script>
const items = [{ name: 'Lamp', price: 25 }, { name: 'Chair', price: 40 }, { name: 'Desk', price: 120 }]
const cart = JSON.parse(sessionStorage.getItem('cart') || '[]')
function render() {
  const view = document.getElementById('view')
  if (location.pathname === '/cart') {
    const total = cart.reduce((t, i) => t + i.price, 0)
    view.innerHTML = '<h1>Cart</h1><ul>' + cart.map((i) => '<li>' + i.name + '</li>').join('') + '</ul>' +
      '<p><label for="coupon">Coupon code</label> <input id="coupon"></p>' +
      '<p data-private><label for="gift">Gift message</label> <input id="gift"></p>' +
      '<p><label for="notes">Delivery notes</label> <textarea id="notes" data-marginalia-mask></textarea></p>' +
      '<p><label><input type="checkbox" id="wrap"> Gift wrap</label></p>' +
      '<button type="button" id="apply">Apply</button>' +
      '<p>Total: <output id="total" aria-label="Total">$' + total.toFixed(2) + '</output></p>'
    document.getElementById('apply').addEventListener('click', async () => {
      const r = await fetch('/api/coupon', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code: document.getElementById('coupon').value }) })
      const { discount } = await r.json()
      document.getElementById('total').textContent = '$' + total.toFixed(2) // the bug: the discount is ignored
      document.body.dataset.applied = String(discount)
    })
  } else {
    view.innerHTML = '<h1>Shop</h1><ul>' + items.map((i) => '<li><span class="row"><strong>' + i.name + '</strong> $' + i.price + ' <button type="button">Add to cart</button></span></li>').join('') + '</ul><p id="count"></p>'
    view.querySelectorAll('li').forEach((li, n) => li.querySelector('button').addEventListener('click', () => {
      cart.push(items[n])
      sessionStorage.setItem('cart', JSON.stringify(cart))
      document.getElementById('count').textContent = cart.length + ' in the cart'
    }))
  }
}
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[data-route]')
  if (!a) return
  e.preventDefault()
  history.pushState(null, '', a.getAttribute('href'))
  render()
})
addEventListener('popstate', render)
render()
</script></body></html>`
}

interface App {
  origin: string
  /** The codes POST /api/coupon received, in order. */
  coupons: string[]
}

/** The app's server: the pages, /api/signin, /api/coupon (answers a discount of 0: the page's bug is that it ignores it anyway). */
async function serveApp(cleanups: Cleanups, snippet: string): Promise<App> {
  const coupons: string[] = []
  const body = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let text = ''
      req.on('data', (d: Buffer) => (text += d))
      req.on('end', () => resolve(text))
    })
  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    const html = (s: string) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(s)
    if (pathname === '/signin' || pathname === '/') return html(signInPage(snippet))
    if (pathname === '/shop' || pathname === '/cart') return html(shopPage(snippet))
    if (pathname === '/api/signin' && req.method === 'POST') return void body(req).then(() => res.writeHead(204).end())
    if (pathname === '/api/coupon' && req.method === 'POST')
      return void body(req).then((text) => {
        coupons.push((JSON.parse(text) as { code: string }).code)
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"discount":0}')
      })
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found')
  })
  return { origin: await listenOnLoopback(server, cleanups), coupons }
}

/** Every file under `dir`, read as text (binary bytes included: a secret would show in them too). */
function allFiles(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = []
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name)
    if (statSync(p).isDirectory()) out.push(...allFiles(p))
    else out.push({ file: p, text: readFileSync(p).toString('latin1') })
  }
  return out
}

/** Run `npx playwright test` on `spec` in a folder of the repository (so `@playwright/test` resolves), with a config that points at Debian's Chromium. */
function runPlaywright(cleanups: Cleanups, spec: string): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(path.join(ROOT, '.tmp-repro-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'repro.spec.ts'), spec)
  const config: PlaywrightTestConfig = {
    testDir: '.',
    timeout: 60_000,
    workers: 1,
    retries: 0,
    reporter: 'line',
    use: { headless: true, viewport: { width: 1024, height: 700 }, launchOptions: { executablePath: chromiumPath()!, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] } },
  }
  writeFileSync(path.join(dir, 'playwright.config.ts'), `import { defineConfig } from '@playwright/test'\nexport default defineConfig(${JSON.stringify(config, null, 2)})\n`)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', '--config', path.join(dir, 'playwright.config.ts')], {
      cwd: dir,
      env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', CI: '1', FORCE_COLOR: '0' },
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d))
    child.stderr.on('data', (d: Buffer) => (output += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`npx playwright test did not finish in 120 s:\n${output}`))
    }, 120_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

describe.skipIf(!enabled)('steps to reproduce', () => {
  it('arrive in order with the annotation, keep every secret out, and replay as a passing Playwright test', { timeout: 240_000 }, async () => {
    const { dir } = testDir(cleanups, 'marginalia-repro-')
    const file = path.join(dir, '.marginalia', 'store.json')
    const store = await openStore({ file })
    cleanups.push(() => store.close())
    const logged: string[] = []
    const http = await startHttpServer(store, { port: 0, log: (m) => logged.push(m) })
    cleanups.push(() => http.close())
    const app = await serveApp(cleanups, headSnippet({ server: http.url, command: 'npx marginalia serve' }))

    // The person.
    const { page } = await chromium.newPage()
    await page.goto(`${app.origin}/signin`)
    await page.getByLabel('Email').fill('ann@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${app.origin}/shop`)
    await page.locator('li').filter({ hasText: 'Chair' }).getByRole('button', { name: 'Add to cart' }).click()
    await page.getByRole('link', { name: 'Cart' }).click()
    await page.getByLabel('Coupon code').fill('SAVE10')
    await page.getByLabel('Gift message').fill(GIFT)
    await page.getByLabel('Delivery notes').fill(NOTES)
    await page.getByLabel('Gift wrap').check()
    await page.getByRole('button', { name: 'Apply' }).click()
    await eventually(() => app.coupons, 10_000).toEqual(['SAVE10'])

    // Annotates the total: the composer shows the steps, one is dropped.
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
    await ui(page, '.annotate').click()
    await clickAt(page, await page.locator('#total').boundingBox())
    const lines = ui(page, '.composer .step-list li .step-text')
    await expect.poll(() => lines.allTextContents()).toEqual([
      `1. open /signin`,
      `2. viewport 1024×700`,
      `3. type "ann@example.com" in textbox "Email"`,
      `4. type (not recorded) in "Password"`,
      `5. click button "Sign in"`,
      `6. submit form "Sign in"`,
      `7. open /shop`,
      `8. click button "Add to cart" (Chair)`,
      `9. click link "Cart"`,
      `10. go to /cart`,
      `11. type "SAVE10" in textbox "Coupon code"`,
      `12. type (not recorded) in textbox #gift`,
      `13. type (not recorded) in textbox #notes`,
      `14. check checkbox "Gift wrap"`,
      `15. click button "Apply"`,
    ])
    await page.screenshot({ path: path.join(dir, 'composer.png') })
    await ui(page, '.composer button[aria-label="Drop step 2"]').click()
    await expect.poll(() => lines.count()).toBe(14)
    await ui(page, '.composer input[name="screenshot"]').uncheck({ force: true })
    await ui(page, '.composer textarea').fill('The total ignores the coupon: SAVE10 should take 10% off.')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length, 10_000).toBe(1)
    const a = store.getAllPending()[0]!
    expect(a.steps?.map((s) => s.kind)).toEqual(['navigate', 'type', 'type', 'click', 'submit', 'navigate', 'click', 'click', 'route', 'type', 'type', 'type', 'check', 'click'])
    expect(a.steps?.find((s) => s.target?.name === 'Coupon code')?.value).toBe('SAVE10')
    expect(a.steps?.[2]).toMatchObject({ kind: 'type', masked: true, target: { name: 'Password' } })
    expect(a.steps?.[2]?.value).toBeUndefined()

    // What the agent reads: the numbered lines.
    const mcp = await connect(store)
    cleanups.push(() => mcp.close())
    const answer = await mcp.call('get_annotation', { id: a.id })
    const answerText = JSON.stringify(answer)
    const said = (answer.structuredContent as { steps?: string }).steps
    expect(said).toContain('7. click button "Add to cart" (Chair)')
    expect(said).toContain('9. go to /cart')
    expect(said).toContain('10. type "SAVE10" in textbox "Coupon code"')
    expect(said).toContain('14. click button "Apply"')
    expect(said).toContain(`(replay: marginalia repro ${a.id})`)

    // The replay: the CLI and the REST route write the same test.
    const cli = await runCli(['repro', a.id, '--store', file], dir)
    expect(cli.stderr).toBe('')
    expect(cli.code).toBe(0)
    const rest = await fetch(`${http.url}/api/annotations/${a.id}/repro`)
    expect(rest.status).toBe(200)
    expect(rest.headers.get('content-type')).toContain('text/typescript')
    const spec = await rest.text()
    expect(spec).toBe(cli.stdout)
    expect(spec).toContain('// The total ignores the coupon: SAVE10 should take 10% off.')
    expect(spec).not.toContain('/usr/bin/chromium')
    const run = await runPlaywright(cleanups, spec)
    expect(run.output).toMatch(/1 passed/)
    expect(run.code).toBe(0)
    expect(app.coupons).toEqual(['SAVE10', 'SAVE10'])

    // No secret anywhere: store files and attachments, the server's log, the Markdown, the agent's answer, the test.
    const files = allFiles(path.join(dir, '.marginalia'))
    expect(files.length).toBeGreaterThan(0)
    const everywhere = [...files.map((f) => [f.file, f.text] as const), ['server log', logged.join('\n')] as const, ['markdown', annotationToMarkdown(a)] as const, ['get_annotation', answerText] as const, ['repro test', spec] as const]
    for (const [where, text] of everywhere) {
      for (const secret of [PASSWORD, GIFT, NOTES, 'csrf-HIDDEN-VALUE']) expect(text.includes(secret), `${secret} in ${where}`).toBe(false)
    }
    expect(files.some((f) => f.text.includes('SAVE10'))).toBe(true) // the store does hold the steps
  })
})
