/**
 * Presence reads the same for a stdio agent as for an HTTP one: with `marginalia mcp` (what init's
 * configs run) on the page's store, the overlay shows "Agent connected", then "Agent listening"
 * while the agent waits in watch_annotations, in real Chromium.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openStore } from '../../../src/store/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { CLI } from '../../helpers/cli.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { testDir } from '../../helpers/store.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

describe.skipIf(!enabled)('a stdio agent in the overlay', () => {
  it('reads "Agent connected", then "Agent listening" while it waits, as an HTTP agent does', { timeout: 60_000 }, async () => {
    const { dir, file } = testDir(cleanups, 'marginalia-stdio-presence-')
    const store = await openStore({ file })
    const { http } = await startMarginalia(cleanups, { storeLocation: file }, store)
    const pages = await servePages({ '/': `<!doctype html><html><head><title>App</title></head><body><button id="buy">Buy</button><script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>` }, cleanups)
    const { page } = await chromium.newPage()
    await page.goto(`${pages.origin}/`)
    const agent = page.locator('marginalia-overlay .agent')
    await eventually(() => agent.getAttribute('data-state'), 10_000).toBe('none')

    const client = new Client({ name: 'stdio-presence', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', file, '--root', dir], env: { ...(process.env as Record<string, string>), MARGINALIA_STORE: '', MARGINALIA_PORT: '1' }, stderr: 'pipe' }))
    cleanups.push(() => client.close())
    await eventually(() => agent.getAttribute('data-state'), 15_000).toBe('connected')
    const watch = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } })
    await eventually(() => agent.getAttribute('data-state'), 15_000).toBe('listening')
    expect(await agent.locator('.agent-text').textContent()).toBe('Agent listening')
    const session = await store.createSession({ url: `${pages.origin}/` })
    await store.addAnnotation({ sessionId: session.id, comment: 'Buy is grey' })
    await watch
  })
})
