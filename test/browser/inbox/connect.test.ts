/**
 * The inbox's "Connect an agent" panel in real Chromium: reached from the header, it gives each
 * agent's `init` command (the copy button puts it on the clipboard) and the Cursor and VS Code
 * install links, whose decoded configs reach this server's MCP endpoint — with the token a
 * server takes named by where it comes from, never written into the link.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

interface ServerConfig {
  name?: string
  type?: string
  url: string
  headers?: Record<string, string>
  inputs?: { id: string; type: string; password?: boolean }[]
}

/** The configs inside the panel's two links, decoded as Cursor and VS Code decode them. */
async function installLinks(page: Page): Promise<{ cursor: ServerConfig; cursorName: string | null; vscode: ServerConfig; hrefs: string }> {
  const cursorHref = (await page.locator('#connect-cursor').getAttribute('href'))!
  const vscodeHref = (await page.locator('#connect-vscode').getAttribute('href'))!
  expect(cursorHref.startsWith('cursor://anysphere.cursor-deeplink/mcp/install?')).toBe(true)
  expect(vscodeHref.startsWith('vscode:mcp/install?')).toBe(true)
  const query = new URLSearchParams(cursorHref.slice(cursorHref.indexOf('?') + 1))
  return {
    cursorName: query.get('name'),
    cursor: JSON.parse(Buffer.from(query.get('config')!, 'base64').toString('utf8')) as ServerConfig,
    vscode: JSON.parse(decodeURIComponent(vscodeHref.slice('vscode:mcp/install?'.length))) as ServerConfig,
    hrefs: cursorHref + vscodeHref,
  }
}

/** An MCP initialize request to `url`, as the editor's client opens: the HTTP status and the server's name. */
async function initialize(url: string, headers: Record<string, string> = {}): Promise<{ status: number; server?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'editor', version: '1' } } }),
  })
  const text = await res.text()
  const data = text.split('\n').find((line) => line.startsWith('data: '))
  const body = JSON.parse(data ? data.slice(6) : text) as { result?: { serverInfo?: { name?: string } } }
  if (res.headers.get('mcp-session-id')) await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': res.headers.get('mcp-session-id')!, ...headers } })
  return { status: res.status, server: body.result?.serverInfo?.name }
}

async function openPanel(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`)
  await page.getByRole('button', { name: 'Connect an agent' }).click()
  await page.locator('#connect').waitFor({ state: 'visible', timeout: 10_000 })
  await page.locator('#connect-vscode').waitFor({ state: 'visible', timeout: 10_000 })
}

describe.skipIf(!enabled)('the inbox "Connect an agent" panel', () => {
  it('says what each agent gets, copies its init command, and links Cursor and VS Code to this server', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port: 0, log: () => {} })
    cleanups.push(() => http.close())
    const { context, page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: http.url })
    await openPanel(page, http.url)

    const rows = page.locator('#connect tbody tr')
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.agent))).toEqual(['claude', 'cursor', 'codex', 'gemini', 'vscode', 'windsurf'])
    expect(await page.locator('#connect tr[data-agent="claude"]').textContent()).toMatch(/Push/)
    expect(await page.locator('#connect tr[data-agent="cursor"]').textContent()).toMatch(/Next turn/)
    expect(await page.locator('#connect tr[data-agent="vscode"]').textContent()).toMatch(/While it watches/)

    const cursorRow = page.locator('#connect tr[data-agent="cursor"]')
    await cursorRow.getByRole('button', { name: 'Copy' }).click()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('npx --no-install marginalia init --agent cursor')
    expect(await cursorRow.locator('[data-copy]').textContent()).toBe('Copied')

    const { cursor, cursorName, vscode } = await installLinks(page)
    expect(cursorName).toBe('marginalia')
    expect(cursor).toEqual({ url: http.mcpUrl })
    expect(vscode).toEqual({ name: 'marginalia', type: 'http', url: http.mcpUrl })
    expect(await page.locator('#connect-url').textContent()).toBe(http.mcpUrl)
    expect(await initialize(cursor.url)).toEqual({ status: 200, server: 'marginalia' })
    expect(await page.locator('#connect [data-auth]:visible').count()).toBe(0)
  })

  it("with a server token, the links say where the token comes from and never hold it; the server's token then connects", { timeout: 60_000 }, async () => {
    const token = 'server-token-that-must-stay-out-of-links'
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port: 0, log: () => {}, token })
    cleanups.push(() => http.close())
    const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    await openPanel(page, http.url)

    const { cursor, vscode, hrefs } = await installLinks(page)
    expect(hrefs).not.toContain(token)
    expect(await page.locator('#connect').innerHTML()).not.toContain(token)
    expect(cursor).toEqual({ url: http.mcpUrl, headers: { Authorization: 'Bearer ${env:MARGINALIA_TOKEN}' } })
    expect(vscode.url).toBe(http.mcpUrl)
    expect(vscode.headers).toEqual({ Authorization: 'Bearer ${input:marginalia-token}' })
    expect(vscode.inputs).toMatchObject([{ id: 'marginalia-token', type: 'promptString', password: true }])
    expect(await page.locator('#connect [data-auth="server-token"]').isVisible()).toBe(true)
    // What the editor sends once it has filled in the token: the endpoint answers; without it, 401.
    expect(await initialize(cursor.url, { Authorization: `Bearer ${token}` })).toEqual({ status: 200, server: 'marginalia' })
    expect((await initialize(cursor.url).catch(() => ({ status: 401 }))).status).toBe(401)
  })

  it('with sign-in on, the links take an agent token and the panel says how an admin makes one', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await startHttpServer(store, { port: 0, log: () => {}, team: { requireSignIn: true } })
    cleanups.push(() => http.close())
    const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    await openPanel(page, http.url)

    const { cursor, vscode } = await installLinks(page)
    expect(cursor).toEqual({ url: http.mcpUrl, headers: { Authorization: 'Bearer ${env:MARGINALIA_TOKEN}' } })
    expect(vscode.headers).toEqual({ Authorization: 'Bearer ${input:marginalia-token}' })
    expect(await page.locator('#connect [data-auth="agent-token"]').textContent()).toContain('marginalia agents add NAME')
    expect(await page.locator('#connect [data-auth="server-token"]').isVisible()).toBe(false)
  })
})
