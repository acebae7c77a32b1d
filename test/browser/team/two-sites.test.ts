/**
 * The team inbox end to end in Chromium, with two different sites: the app on app.test, Marginalia on
 * mg.test (both mapped to 127.0.0.1 by Chromium's host resolver, each on its own port). A third
 * site, evil.test, is not allowed and gets nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages, shopPage } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'

const chromium = useChromium({ args: ['--host-resolver-rules=MAP app.test 127.0.0.1, MAP mg.test 127.0.0.1, MAP evil.test 127.0.0.1'] })
const { enabled, cleanups } = chromium

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

describe.skipIf(!enabled)('team inbox across two sites in Chromium', () => {
  it('a person signs in through the link and the popup, annotates; an agent with its token answers; the reply arrives live with its name; reload keeps the sign-in; sign out works; a third site gets nothing', { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    // The app's pages: its port is known once it listens, the server's once it listens: pages are functions.
    let mgUrl = ''
    const pages = await servePages({ '/shop': () => shopPage(mgUrl), '/evil': () => '<!doctype html><title>evil</title><p>evil</p>' }, cleanups)
    const appPort = new URL(pages.origin).port
    const appOrigin = `http://app.test:${appPort}`
    const http = await startHttpServer(store, { port: 0, log: () => {}, allowOrigins: [appOrigin], team: { publicUrl: 'http://mg.test' } })
    cleanups.push(() => http.close())
    mgUrl = `http://mg.test:${http.port}`
    // The public URL is per test (the port is random), so the server's Host check learns mg.test from it.
    const alice = await addPerson(store, 'Alice Martin', { publicUrl: mgUrl })
    const agent = await addAgent(store, 'ci-agent')

    const context = await chromium.browser.newContext({ viewport: { width: 1100, height: 750 } })
    cleanups.push(() => context.close())

    // 1. The person opens the sign-in link (a page on the server's own origin).
    const signIn = await context.newPage()
    await signIn.goto(alice.link)
    await signIn.getByText('Signed in as Alice Martin').waitFor({ timeout: 15_000 })
    expect(signIn.url()).not.toContain('code=') // the one-time code left the address bar
    await signIn.close()

    // 2. The app page loads the overlay from mg.test; it asks to sign in.
    const page = await context.newPage()
    await page.goto(`${appOrigin}/shop`)
    await ui(page, '.signed-in .sign-in').waitFor({ timeout: 15_000 })
    const [popup] = await Promise.all([page.waitForEvent('popup'), ui(page, '.signed-in .sign-in').click()])
    // The popup closes itself once it has handed the token over (it may have done so already:
    // the close event is not fired again); when it does not, what it says is the reason.
    if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 15_000 }).catch(async (e: unknown) => {
      if (popup.isClosed()) return
      const said = await popup.locator('#status').textContent().catch(() => '(unreadable)')
      throw new Error(`the sign-in popup did not close; it says: ${said}`, { cause: e })
    })
    await ui(page, '.who-name').filter({ hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    const kept = (await page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('marginalia.session'))")) as string[]
    expect(kept).toHaveLength(1) // the app origin keeps its own token

    // 3. The person annotates.
    await ui(page, '.annotate').click()
    await page.locator('#checkout').click()
    await ui(page, '.composer textarea').fill('Checkout is too low on the page')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.listAnnotations().length).toBe(1)
    const annotation = store.listAnnotations()[0]!
    expect(annotation.by).toMatchObject({ name: 'Alice Martin', kind: 'person' })

    // 4. The agent, with its own token, acknowledges and replies over MCP (HTTP).
    const client = new Client({ name: 'ci-agent', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${agent.token}` } } }))
    cleanups.push(() => client.close())
    expect((await client.callTool({ name: 'acknowledge', arguments: { id: annotation.id } })).isError).toBeFalsy()
    expect((await client.callTool({ name: 'reply', arguments: { id: annotation.id, message: 'Moved it up, have a look' } })).isError).toBeFalsy()

    // 5. The person sees the reply live, with the agent's name.
    await ui(page, '.pin').first().click()
    await ui(page, '.thread .reply').filter({ hasText: 'Moved it up' }).waitFor({ timeout: 15_000 })
    await expect(ui(page, '.thread .reply .who b').last().textContent()).resolves.toBe('ci-agent')
    await page.screenshot({ path: '/tmp/team-two-sites.png' })

    // 6. Reload keeps the person signed in.
    await page.reload()
    await ui(page, '.who-name').filter({ hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })

    // 7. Sign out: the token is gone from the app origin and stops working on the server.
    const token = (await page.evaluate("JSON.parse(localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith('marginalia.session')))).token")) as string
    await ui(page, '.signed-in .sign-out').click()
    await ui(page, '.signed-in .sign-in').waitFor({ timeout: 15_000 })
    await eventually(async () => (await fetch(`${http.url}/api/annotations`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401)

    // 8. A third site that is not allowed gets no data: fetch and the event stream fail; nothing is created.
    const evil = await context.newPage()
    await evil.goto(`http://evil.test:${appPort}/evil`)
    const before = store.rev
    const results = await evil.evaluate(async ({ mg, token: t }) => {
      const tryFetch = async (path: string, init?: RequestInit) => {
        try {
          const r = await fetch(mg + path, init)
          return `status ${r.status}`
        } catch {
          return 'blocked'
        }
      }
      return {
        list: await tryFetch('/api/annotations', { headers: { Authorization: `Bearer ${t}` } }),
        events: await tryFetch('/api/events', { headers: { Authorization: `Bearer ${t}` } }),
        create: await tryFetch('/api/sessions', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${t}` }, body: JSON.stringify({ url: 'http://evil.test/' }) }),
      }
    }, { mg: mgUrl, token: agent.token })
    expect(results).toEqual({ list: 'blocked', events: 'blocked', create: 'blocked' })
    expect(store.rev).toBe(before)
  })
})
