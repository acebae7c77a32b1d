/**
 * The inbox as an MCP App, driven the way a host drives it: the MCP Apps SDK's own host bridge
 * (`AppBridge`) with a real v2 SDK client connected to a real Marginalia server over Streamable
 * HTTP, and the app in a sandboxed frame of real Chromium under a host's default CSP (no network).
 * The bridge runs here; the host page only relays postMessage traffic between it and the frame.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { filter, firstValueFrom } from 'rxjs'
import { Client, StreamableHTTPClientTransport, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import { AppBridge, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge'
import type { Store } from '../../src/index.js'
import { INBOX_APP_URI } from '../../src/mcp/app.js'
import { useChromium } from '../helpers/chromium.js'
import { startMarginalia } from '../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const UI_EXTENSION = { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } }
/** What a host that declares no domains for an app applies to it: scripts and styles inline, images as data, no network. */
const HOST_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'self'"

/** The two revisions /mcp serves: a 2025-11-25 session (capabilities declared at initialize) and 2026-07-28 requests (each carrying them). */
const ERAS = [
  { era: '2025-11-25 session', version: '2025-11-25' },
  { era: '2026-07-28 requests', version: '2026-07-28' },
] as const

async function mcpClient(url: string, extensions?: typeof UI_EXTENSION, version?: string): Promise<Client> {
  const client = new Client(
    { name: 'test-host', version: '1.0.0' },
    {
      capabilities: extensions ? { extensions } : {},
      ...(version === undefined ? {} : { versionNegotiation: { mode: version === '2026-07-28' ? { pin: version } : ('legacy' as const) } }),
    },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  if (version !== undefined) expect(client.getNegotiatedProtocolVersion()).toBe(version)
  cleanups.push(() => client.close())
  return client
}

/** postMessage traffic between the bridge (here) and the app's frame (in the page). */
class FrameRelay implements Transport {
  onmessage?: (message: JSONRPCMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  constructor(private readonly page: Page) {}
  async start(): Promise<void> {
    await this.page.exposeBinding('toBridge', (_source, data: string) => this.onmessage?.(JSON.parse(data) as JSONRPCMessage))
  }
  async send(message: JSONRPCMessage): Promise<void> {
    await this.page.evaluate((m) => (window as unknown as { toApp(m: unknown): void }).toApp(m), message as unknown)
  }
  async close(): Promise<void> {
    this.onclose?.()
  }
}

const HOST_PAGE = `<!doctype html><html><body>
<iframe id="app" sandbox="allow-scripts" style="width:900px;height:650px;border:0"></iframe>
<script>
const frame = document.getElementById('app')
window.addEventListener('message', (e) => { if (e.source === frame.contentWindow) window.toBridge(JSON.stringify(e.data)) })
window.toApp = (m) => frame.contentWindow.postMessage(m, '*')
window.load = (html) => { frame.srcdoc = html }
</script></body></html>`

async function seed(store: Store) {
  const session = await store.createSession({ url: 'http://localhost:5173/checkout' })
  const asked = await store.addAnnotation({ sessionId: session.id, comment: 'The pay button is hidden on mobile' })
  await store.reply(asked.id, { author: 'agent', message: 'Which phone width?', kind: 'question' })
  const other = await store.addAnnotation({ sessionId: session.id, comment: 'Typo in the footer' })
  const done = await store.addAnnotation({ sessionId: session.id, comment: 'Logo too small' })
  await store.resolve(done.id, { summary: 'Made it 48px' })
  return { asked, other, done }
}

describe.skipIf(!enabled)('the inbox as an MCP App', () => {
  it('a host that renders apps gets the app; it lists and filters, and an answer typed in it lands in the store', { timeout: 60_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const { asked, other, done } = await seed(store)
    const client = await mcpClient(http.mcpUrl, UI_EXTENSION)

    // The tools whose results the app shows link it; its own tools are for the app only.
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    for (const name of ['get_all_pending', 'get_session', 'watch_annotations']) expect(byName[name]!._meta, name).toMatchObject({ ui: { resourceUri: INBOX_APP_URI } })
    expect(byName.resolve!._meta).toBeUndefined()
    expect(byName.inbox_reply!._meta).toMatchObject({ ui: { resourceUri: INBOX_APP_URI, visibility: ['app'] } })
    const { resources } = await client.listResources()
    expect(resources.find((r) => r.uri === INBOX_APP_URI)).toMatchObject({ mimeType: RESOURCE_MIME_TYPE })
    const read = await client.readResource({ uri: INBOX_APP_URI })
    const content = read.contents[0] as { mimeType: string; text: string }
    expect(content.mimeType).toBe('text/html;profile=mcp-app')
    // One self-contained document: nothing to fetch.
    expect(content.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i)

    const { page } = await chromium.newPage()
    await page.route('http://host.test/', (route) => route.fulfill({ contentType: 'text/html', headers: { 'content-security-policy': HOST_CSP }, body: HOST_PAGE }))
    const blocked: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) blocked.push(m.text())
    })
    page.setDefaultTimeout(10_000)
    await page.goto('http://host.test/')

    const bridge = new AppBridge(client, { name: 'test-host', version: '1.0.0' }, { serverTools: {}, serverResources: {} }, { hostContext: { theme: 'dark' } })
    const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()))
    await bridge.connect(new FrameRelay(page))
    await page.evaluate((html) => (window as unknown as { load(h: string): void }).load(html), content.text)
    await initialized

    const app = page.frameLocator('#app')
    const card = (id: string) => app.locator(`.card[data-id="${id}"]`)
    // "Needs attention" by default: the open question and the pending one, not the resolved one.
    await card(asked.id).waitFor({ timeout: 15_000 })
    await card(other.id).waitFor()
    expect(await card(done.id).count()).toBe(0)
    await expect.poll(() => app.locator('#count').textContent()).toBe('2 of 3 annotations')
    expect(await card(asked.id).locator('.reply[data-open]').textContent()).toContain('Which phone width?')
    expect(await app.locator('html').getAttribute('data-theme')).toBe('dark') // the host's context reached it

    // Filters: by status, by text.
    await app.locator('#status').selectOption('question')
    await expect.poll(() => app.locator('.card').count()).toBe(1)
    await app.locator('#status').selectOption('resolved')
    await card(done.id).waitFor()
    await app.locator('#status').selectOption('all')
    await app.locator('#search').fill('footer')
    await expect.poll(() => app.locator('.card').count()).toBe(1)
    await card(other.id).waitFor()
    await app.locator('#search').fill('')

    // A reply typed in the app travels on the agent's connection: recorded as through the host, never as the person's answer.
    const replied = firstValueFrom(store.changes$.pipe(filter((e) => e.type === 'annotation.replied' && e.annotationId === asked.id)))
    await card(asked.id).locator('textarea').fill('375 px, an iPhone SE')
    await card(asked.id).locator('button[data-action="reply"]').click()
    await replied
    expect(store.getAnnotation(asked.id).replies.at(-1)).toMatchObject({ author: 'agent', via: 'host', message: '375 px, an iPhone SE' })
    // The app read the inbox again: the reply shows as through the app, and the question is still the person's to answer.
    await expect.poll(() => card(asked.id).locator('.reply[data-via="host"]').textContent()).toContain('Through this app')
    expect(await card(asked.id).locator('.reply[data-open]').count()).toBe(1)

    // A status change is a tool call too.
    const resolved = firstValueFrom(store.changes$.pipe(filter((e) => e.type === 'annotation.status_changed' && e.annotationId === other.id)))
    await card(other.id).locator('button[data-action="resolve"]').click()
    await resolved
    expect(store.getAnnotation(other.id).status).toBe('resolved')
    await card(other.id).locator('button[data-action="reopen"]').waitFor()

    expect(blocked).toEqual([])
  })

  it.each(ERAS)('$era: a host that announces the UI extension is offered the app: the linked tools, the app tools, the resource', async ({ version }) => {
    const { store, http } = await startMarginalia(cleanups)
    const { asked } = await seed(store)
    const client = await mcpClient(http.mcpUrl, UI_EXTENSION, version)
    const { tools } = await client.listTools()
    expect(tools.find((t) => t.name === 'get_all_pending')!._meta).toMatchObject({ ui: { resourceUri: INBOX_APP_URI } })
    expect(tools.map((t) => t.name).filter((n) => n.startsWith('inbox_'))).toEqual(['inbox_reply', 'inbox_set_status'])
    const { resources } = await client.listResources()
    expect(resources.filter((r) => r.uri.startsWith('ui://')).map((r) => r.uri)).toEqual([INBOX_APP_URI])
    const read = await client.readResource({ uri: INBOX_APP_URI })
    expect(read.contents[0]).toMatchObject({ uri: INBOX_APP_URI, mimeType: RESOURCE_MIME_TYPE })
    const call = await client.callTool({ name: 'inbox_reply', arguments: { id: asked.id, message: 'iPhone SE' } })
    expect(call.isError).toBeFalsy()
    expect(store.getAnnotation(asked.id).replies.at(-1)).toMatchObject({ author: 'agent', via: 'host', message: 'iPhone SE' })
  })

  it.each(ERAS)('$era: a client that does not announce the UI extension sees no app: no ui:// resource, no _meta.ui, no app tools, no read', async ({ version }) => {
    const { store, http } = await startMarginalia(cleanups)
    const { asked } = await seed(store)
    const client = await mcpClient(http.mcpUrl, undefined, version)
    const { tools } = await client.listTools()
    expect(tools.filter((t) => t._meta !== undefined)).toEqual([])
    expect(tools.map((t) => t.name).filter((n) => n.startsWith('inbox_'))).toEqual([])
    const { resources } = await client.listResources()
    expect(resources.filter((r) => r.uri.startsWith('ui://'))).toEqual([])
    await expect(client.readResource({ uri: INBOX_APP_URI })).rejects.toThrow(/Missing required client capabilities/)
    const call = await client.callTool({ name: 'inbox_reply', arguments: { id: asked.id, message: 'hi' } })
    expect(call.isError).toBe(true)
    expect(store.getAnnotation(asked.id).replies).toHaveLength(1)
  })
})
