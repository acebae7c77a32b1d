/**
 * The browser extension in real Chromium: on a plain site with no Marginalia code the person
 * annotates by the keyboard and the agent gets the URL, a screenshot, and the console error and
 * failed request of the page's first script; a site with `default-src 'self'` works the same;
 * a site that is not listed gets nothing at all.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { structured } from '../../helpers/mcp.js'
import type { Page } from 'playwright-core'
import { browserTestsEnabled } from '../../helpers/chromium.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { decodePng } from '../../helpers/png.js'
import { EXTENSION_ORIGIN, configure, launchWithExtension, registeredMatches, serveSite } from './helpers.js'

const enabled = browserTestsEnabled()
const cleanups = useCleanups()

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const JS = { 'Content-Type': 'text/javascript' }
const STRICT = { ...HTML, 'Content-Security-Policy': "default-src 'self'" }
/** What the page's very first script does: an error on the console and a request that fails. */
const FIRST_SCRIPT = "console.error('Boom before the app started'); fetch('/api/missing.json').catch(() => {})"
const body = (title: string, head: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body style="font:16px sans-serif;margin:40px"><h1>${title}</h1><button id="buy" data-mid="k3f9" style="background:#0a7;color:#fff;padding:12px 20px;border:0">Buy now</button></body></html>`

/** Annotate #buy by the keyboard: focus it, the annotate shortcut, Enter, write, Ctrl+Enter. */
async function annotateByKeyboard(page: Page, text: string): Promise<void> {
  await ui(page, '.annotate').waitFor({ timeout: 15_000 })
  await page.focus('#buy')
  await page.keyboard.press('Alt+Shift+A')
  await page.keyboard.press('Enter')
  await ui(page, '.composer textarea').waitFor()
  await page.keyboard.type(text)
  await page.keyboard.press('Control+Enter')
}

describe.skipIf(!enabled)('the browser extension in Chromium', () => {
  it('on a listed plain site and a listed strict-CSP site: the agent gets the URL, file:line, a screenshot, the first script\'s console error and failed request; an unlisted site gets nothing, nor one taken off the list', { timeout: 90_000 }, async () => {
    // The site is a preview build: its elements carry ids the server resolves through the build's manifest.
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN], sources: { manifest: { k3f9: 'src/Shop.tsx:12:7' } } })
    const site = await serveSite(cleanups, {
      '/': [HTML, body('Plain shop', `<script>${FIRST_SCRIPT}</script>`)],
      '/strict': [STRICT, body('Strict shop', '<script src="/first.js"></script>')],
      '/first.js': [JS, FIRST_SCRIPT],
    })
    const other = await serveSite(cleanups, { '/': [HTML, body('Not listed', '')] })
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*'])
    await configure(worker, { server: http.url, sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])

    // 1. A plain site: nothing of Marginalia in it.
    const page = await context.newPage()
    await page.goto(`${site.origin}/`)
    await annotateByKeyboard(page, 'The button should be blue')
    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    const session = store.getSession(a!.sessionId)
    expect(session?.url).toBe(`${site.origin}/`)
    expect(a!.comment).toBe('The button should be blue')
    expect(a!.element?.selector).toContain('buy')
    expect(a!.source).toMatchObject({ file: 'src/Shop.tsx', line: 12, column: 7 })
    expect(a!.element?.fingerprint).toMatchObject({ tag: 'button', text: 'Buy now', attributes: { id: 'buy' } })
    expect(a!.element?.styles?.['background-color']).toBe('rgb(0, 170, 119)')
    const messages = a!.context?.entries.map((e) => e.message) ?? []
    expect(messages).toContain('Boom before the app started')
    expect(messages.some((m) => m.includes('/api/missing.json') && m.includes('404'))).toBe(true)
    const shot = a!.attachments?.find((x) => x.kind === 'screenshot')
    expect(shot, 'a screenshot').toBeDefined()
    expect((await store.blobs.get(shot!.sha256))?.bytes.length).toBeGreaterThan(100)
    // What the agent gets over MCP.
    const agent = new Client({ name: 'test-agent', version: '1.0.0' })
    await agent.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
    cleanups.push(() => agent.close())
    const got = structured<{ annotation: { url?: string; comment: string; source?: unknown; attachments?: { kind: string }[]; context?: { entries: { message: string }[] } } }>((await agent.callTool({ name: 'get_annotation', arguments: { id: a!.id } })) as CallToolResult)
    expect(got.annotation).toMatchObject({ url: `${site.origin}/`, comment: 'The button should be blue', source: { file: 'src/Shop.tsx', line: 12 } })
    expect(got.annotation.attachments?.map((x) => x.kind)).toContain('screenshot')
    expect(got.annotation.context?.entries.map((e) => e.message)).toEqual(messages)
    // The page has no script of ours: the overlay came in through the extension.
    expect(site.requests.map((r) => r.path)).not.toContain('/overlay.js')

    // 2. A strict Content-Security-Policy (default-src 'self'): the same, the server is reached through the extension.
    const strict = await context.newPage()
    const violations: string[] = []
    strict.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) violations.push(m.text())
    })
    await strict.goto(`${site.origin}/strict`)
    await annotateByKeyboard(strict, 'Strict page, still works')
    await eventually(() => store.getAllPending().length).toBe(2)
    const b = store.getAllPending().find((x) => x.comment === 'Strict page, still works')!
    expect(store.getSession(b.sessionId)?.url).toBe(`${site.origin}/strict`)
    expect(b.context?.entries.map((e) => e.message)).toContain('Boom before the app started')
    expect(violations.filter((v) => v.includes(new URL(http.url).host))).toEqual([])
    // The log is the early recorder's, taken over by the overlay (contract version 1), and the
    // requests the service worker carried to the server are not among the page's failures.
    const serverHost = new URL(http.url).host
    const log = await strict.evaluate(() => {
      const l = (window as unknown as Record<symbol, { version: number; recent(): { message: string; url?: string }[] } | undefined>)[Symbol.for('marginalia.pageLog')]
      return { version: l?.version, entries: l?.recent().map((e) => `${e.message} ${e.url ?? ''}`) ?? [] }
    })
    expect(log.version).toBe(1)
    expect(log.entries.some((m) => m.includes('Boom before the app started'))).toBe(true)
    expect(log.entries.filter((m) => m.includes(serverHost))).toEqual([])
    expect([...messages, ...(b.context?.entries.map((e) => e.message) ?? [])].filter((m) => m.includes(serverHost))).toEqual([])

    // 3. A site that is not listed: no element, no script of ours, no page log.
    const unlisted = await context.newPage()
    await unlisted.goto(`${other.origin}/`)
    await unlisted.waitForLoadState('load')
    const injected = () => ({ overlay: document.querySelector('marginalia-overlay') !== null, api: 'Marginalia' in window, log: Object.getOwnPropertySymbols(window).map(String) })
    expect(await unlisted.evaluate(injected)).toEqual({ overlay: false, api: false, log: [] })

    // 4. Taken off the list: its pages get nothing from the next load on.
    await configure(worker, { sites: [] })
    await eventually(() => registeredMatches(worker)).toEqual([])
    await page.reload()
    await page.waitForLoadState('load')
    expect(await page.evaluate(injected)).toEqual({ overlay: false, api: false, log: [] })
  })

  it('a strict-CSP page gets its screenshot from the browser\'s own picture of the tab, cut to the element, when the extension may take it', { timeout: 60_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN] })
    // Styles from a file: the policy blocks the style attributes too.
    const site = await serveSite(cleanups, { '/strict': [STRICT, body('Strict shop', '<link rel="stylesheet" href="/shop.css">')], '/shop.css': [{ 'Content-Type': 'text/css' }, '#buy { background: #0a7 !important; padding: 12px 20px; border: 0 }'] })
    // What a click on the toolbar button grants for the tab (activeTab) is given here at install: <all_urls>.
    const { context, worker } = await launchWithExtension(cleanups, ['<all_urls>'])
    await configure(worker, { server: http.url, sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])
    const page = await context.newPage()
    await page.goto(`${site.origin}/strict`)
    await annotateByKeyboard(page, 'Green should be blue')
    await eventually(() => store.getAllPending().length).toBe(1)
    const shot = store.getAllPending()[0]!.attachments?.find((x) => x.kind === 'screenshot')
    expect(shot, 'a screenshot although img-src blocks data: images').toBeDefined()
    const png = decodePng(Buffer.from((await store.blobs.get(shot!.sha256))!.bytes))
    const box = (await page.locator('#buy').boundingBox())!
    // The element with a 16 px margin: about its size, and its colour in the middle.
    expect(png.width).toBeGreaterThanOrEqual(Math.floor(box.width))
    expect(png.width).toBeLessThanOrEqual(Math.ceil(box.width + 40))
    const [r, g, b] = png.pixel(Math.floor(png.width / 2), Math.floor(png.height / 2) - 4)
    expect([r, g, b]).toEqual([0, 170, 119])
  })

  it('the options page saves the server and the sites (checked, named in the error); the popup turns a site on and off, reloading the tab', { timeout: 60_000 }, async () => {
    const site = await serveSite(cleanups, { '/': [HTML, body('Plain shop', '')] })
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*'])
    const options = await context.newPage()
    await options.goto(`${EXTENSION_ORIGIN}/options.html`)
    await eventually(() => options.locator('#server').inputValue()).toBe('http://127.0.0.1:4848')
    await options.locator('#sites').fill('staging.example.com')
    await options.getByRole('button', { name: 'Save' }).click()
    await options.locator('#saved').filter({ hasText: '"staging.example.com" is not a site origin' }).waitFor()
    await options.locator('#server').fill('http://127.0.0.1:4999/')
    await options.locator('#sites').fill(`${site.origin}/some/page\n${site.origin}`)
    await options.getByRole('button', { name: 'Save' }).click()
    await options.locator('#saved').filter({ hasText: 'Saved.' }).waitFor()
    expect(await worker.evaluate('chrome.storage.sync.get(["server", "sites"])')).toEqual({ server: 'http://127.0.0.1:4999', sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])

    // The popup on the site's tab (a window of its own, so the site stays the active tab).
    const page = await context.newPage()
    await page.goto(`${site.origin}/`)
    const [popup] = await Promise.all([context.waitForEvent('page'), worker.evaluate(`chrome.windows.create({ url: chrome.runtime.getURL('popup.html'), type: 'popup' })`)])
    await popup.locator('#toggle').filter({ hasText: 'On for this site' }).waitFor({ timeout: 15_000 })
    expect(await popup.locator('#state').textContent()).toBe("Can't reach it: is marginalia serve running?")
    await Promise.all([page.waitForEvent('load'), popup.locator('#toggle').click()])
    await popup.locator('#toggle').filter({ hasText: 'Off' }).waitFor()
    expect(await worker.evaluate('chrome.storage.sync.get("sites")')).toEqual({ sites: [] })
    await eventually(() => registeredMatches(worker)).toEqual([])
    await Promise.all([page.waitForEvent('load'), popup.locator('#toggle').click()])
    await popup.locator('#toggle').filter({ hasText: 'On for this site' }).waitFor()
    expect(await worker.evaluate('chrome.storage.sync.get("sites")')).toEqual({ sites: [site.origin] })

    // A server that was not told about the extension: the popup says how to let it in.
    const { http } = await startMarginalia(cleanups)
    await configure(worker, { server: http.url })
    await popup.reload()
    await popup.locator('#state').filter({ hasText: `It refused: start it with --allow-origin ${EXTENSION_ORIGIN}` }).waitFor({ timeout: 15_000 })
  })
})
