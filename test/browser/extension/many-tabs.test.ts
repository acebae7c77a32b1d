/**
 * Many tabs of a listed site open at once with the extension: every tab's requests go through the
 * extension's service worker, and a browser keeps at most six HTTP/1.1 connections to one server:
 * the worker holds one live stream for all the tabs. Every tab comes in and is live, and the last
 * one opened still sends what the person writes.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Page } from 'playwright-core'
import { browserTestsEnabled } from '../../helpers/chromium.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { EXTENSION_ORIGIN, configure, launchWithExtension, registeredMatches, serveSite } from './helpers.js'

const enabled = browserTestsEnabled()
const cleanups = useCleanups()
const TABS = 8
const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)
const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const page = (title: string) => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font:16px sans-serif;margin:40px"><h1>${title}</h1><button id="buy">Buy now</button></body></html>`

describe.skipIf(!enabled)('many tabs with the extension', () => {
  it(`${TABS} tabs of a listed site: each one's toolbar comes in, the last one sends, and each one is live (an agent connecting is seen in each, and the agent's acknowledgement in the last)`, { timeout: 120_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN] })
    const routes: Record<string, [typeof HTML, string]> = {}
    for (let i = 0; i < TABS; i++) routes[`/p${i}`] = [HTML, page(`Page ${i}`)]
    const site = await serveSite(cleanups, routes)
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*'])
    await configure(worker, { server: http.url, sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])
    const tabs: Page[] = []
    for (let i = 0; i < TABS; i++) {
      const tab = await context.newPage()
      await tab.goto(`${site.origin}/p${i}`)
      tabs.push(tab)
    }
    // Every tab's toolbar came in, having heard the server.
    for (const tab of tabs) {
      await ui(tab, '.annotate').waitFor({ timeout: 15_000 })
      expect(await ui(tab, '.dock').textContent()).toContain('No agent connected')
    }
    // The last tab still reaches the server: what the person sends there arrives.
    const last = tabs.at(-1)!
    await last.focus('#buy')
    await last.keyboard.press('Alt+Shift+A')
    await last.keyboard.press('Enter')
    await ui(last, '.composer textarea').waitFor()
    await last.keyboard.type('From the eighth tab')
    await last.keyboard.press('Control+Enter')
    await eventually(() => store.getAllPending().map((a) => a.comment), 20_000).toEqual(['From the eighth tab'])
    const agent = new Client({ name: 'test-agent', version: '1.0.0' })
    await agent.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
    cleanups.push(() => agent.close())
    // Every tab is live: an agent connecting now is seen in each, from its stream (well before the
    // overlay's /health poll, every 20 s, could tell it).
    const connected = Date.now()
    for (const tab of tabs) await eventually(() => ui(tab, '.dock').textContent(), 8_000).toContain('Agent connected')
    expect(Date.now() - connected).toBeLessThan(15_000)
    // One stream to the server carries every tab's (a stream a tab would leave the seventh none of the six
    // connections a browser keeps to a server), and the agent's work reaches the tab at once.
    await eventually(() => http.stats().eventStreams, 5_000).toBe(1)
    const [a] = store.getAllPending()
    await store.acknowledge(a!.id)
    await eventually(() => ui(last, `.pin[data-id="${a!.id}"]`).getAttribute('data-status'), 8_000).toBe('acknowledged')
  })
})
