/**
 * The overlay in real Chromium, as a person uses it: a fixture page on its own loopback port
 * loads `<script src="…/overlay.js">` from a Marginalia server started here, and the test clicks,
 * types and reads what the person would. The agent's side goes through the real MCP tools.
 */
import { describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { createMemoryStore, startHttpServer, type HttpServer, type Store } from '../../src/index.js'
import { useChromium } from '../helpers/chromium.js'
import { connect, structured } from '../helpers/mcp.js'
import { servePages, shopPage, type PageServer } from '../helpers/page.js'
import { eventually } from '../helpers/eventually.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

interface Setup {
  store: Store
  http: HttpServer
  pages: PageServer
  context: BrowserContext
  page: Page
  pageUrl: string
}

async function setup(options: { store?: Store; port?: number; open?: boolean; token?: string } = {}): Promise<Setup> {
  const store = options.store ?? createMemoryStore()
  if (!options.store) cleanups.push(() => store.close())
  const http = await startHttpServer(store, { port: options.port ?? 0, log: () => {}, ...(options.token ? { token: options.token } : {}) })
  cleanups.push(() => http.close())
  const pages = await servePages({ '/shop': () => shopPage(http.url), '/other': () => shopPage(http.url) }, cleanups)
  const { context, page } = await chromium.newPage()
  const pageUrl = `${pages.origin}/shop`
  if (options.open !== false) await openPage(page, pageUrl)
  return { store, http, pages, context, page, pageUrl }
}

/** Load the page and wait until the overlay has talked to the server. */
async function openPage(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/**
 * Annotate mode fetched (its chunk comes when the person first reaches for the toolbar): Annotate
 * pressed, the picker on, and pressed again. A page whose server goes away before then cannot
 * open annotate mode until it is back ("annotate mode cannot be fetched" below).
 */
async function fetchAnnotateMode(page: Page): Promise<void> {
  await ui(page, '.annotate').click()
  await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
  await ui(page, '.annotate').click()
  await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
}

async function annotate(page: Page, target: string, comment: string, choices: { intent?: string; severity?: string } = {}): Promise<void> {
  if ((await ui(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await ui(page, '.annotate').click()
  await page.locator(target).first().click()
  await ui(page, '.composer textarea').fill(comment)
  if (choices.intent) await ui(page, `.composer input[name="intent"][value="${choices.intent}"]`).check({ force: true })
  if (choices.severity) await ui(page, `.composer input[name="severity"][value="${choices.severity}"]`).check({ force: true })
  await ui(page, '.composer button[type="submit"]').click()
}

describe.skipIf(!enabled)('overlay in Chromium', () => {
  it('annotates a clicked element: the store gets its unique selector, path, snippet, HTML, rect, the page URL and viewport', { timeout: 60_000 }, async () => {
    const { store, page, pageUrl, pages } = await setup()
    // Alt+Shift+A enters annotate mode; the page does not see the click that picks the element.
    await page.keyboard.press('Alt+Shift+A')
    await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
    await page.locator('.card:nth-child(2) .buy').hover()
    await eventually(() => ui(page, '.highlight').isVisible()).toBe(true)
    await page.locator('.card:nth-child(2) .buy').click()
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(0)
    await eventually(() => ui(page, '.composer').isVisible()).toBe(true)
    // Typing in the overlay does not reach the page's key handlers.
    const pageKeys = () => page.evaluate(() => (window as unknown as { pageKeys: number }).pageKeys)
    const keysBefore = await pageKeys()
    await ui(page, '.composer textarea').pressSequentially('Buy is too small')
    expect(await pageKeys()).toBe(keysBefore)
    await ui(page, '.composer input[name="intent"][value="change"]').check({ force: true })
    await ui(page, '.composer input[name="severity"][value="blocking"]').check({ force: true })
    await ui(page, '.composer textarea').press('Control+Enter')

    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.comment).toBe('Buy is too small')
    expect(a!.intent).toBe('change')
    expect(a!.severity).toBe('blocking')
    expect(a!.url).toBe(pageUrl)
    expect(a!.viewport).toEqual({ width: 1024, height: 700 })
    expect(a!.element).toMatchObject({ tag: 'button', text: 'Buy' })
    expect(a!.element!.html).toBe('<button class="buy">Buy</button>')
    expect(a!.element!.path).toMatch(/^html > body > main > div\.grid > div\.card > button\.buy$/)
    expect(a!.element!.rect!.width).toBeGreaterThan(0)
    // The selector matches that element and nothing else.
    const matches = await page.evaluate((selector) => {
      const found = document.querySelectorAll(selector)
      return { count: found.length, isSecondBuy: found[0] === document.querySelectorAll('.buy')[1] }
    }, a!.element!.selector)
    expect(matches).toEqual({ count: 1, isSecondBuy: true })
    // One session for the page (origin + path), named after its title; remembered for the next visit.
    const sessions = store.listSessions()
    expect(sessions.map((s) => [s.url, s.name])).toEqual([[`${pages.origin}/shop`, 'Fixture shop']])
    // The pin shows on the element, numbered, in the pending colour; the outbox is empty again.
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    expect(await ui(page, '.pin').textContent()).toBe('1')
    expect(await ui(page, '.pin').getAttribute('data-status')).toBe('pending')
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('marginalia:outbox')).length)).toBe(0)

    // A second visit reuses the session and shows the pin again.
    await openPage(page, pageUrl)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await annotate(page, '#checkout', 'Checkout should be green')
    await eventually(() => store.getAllPending().length).toBe(2)
    expect(store.listSessions()).toHaveLength(1)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(2)
    // Esc leaves annotate mode; clicks reach the page again.
    await page.keyboard.press('Escape')
    await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    await page.locator('#checkout').click()
    expect(await page.evaluate(() => (window as unknown as { pageClicks: number }).pageClicks)).toBe(1)
  })

  it('annotates selected text, and keeps the page CSS out of the overlay', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    await ui(page, '.annotate').click()
    // Select "Free shipping" with the mouse.
    const box = (await page.locator('.promo').boundingBox())!
    await page.mouse.move(box.x + 2, box.y + box.height / 2)
    await page.mouse.down()
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2, { steps: 5 })
    await page.mouse.up()
    await eventually(() => ui(page, '.composer').isVisible()).toBe(true)
    expect(await ui(page, '.composer blockquote').textContent()).toContain('Free shipping')
    // The page's "* { font-family: Comic Sans !important }" does not reach into the shadow root.
    const font = await ui(page, '.composer textarea').evaluate((el) => getComputedStyle(el).fontFamily)
    expect(font).not.toMatch(/comic/i)
    await ui(page, '.composer textarea').fill('Say the threshold in the header too')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.selectedText).toContain('shipping over $50')
    expect(a!.element!.selector).toBeTruthy()
    expect(await page.evaluate((s) => document.querySelectorAll(s).length, a!.element!.selector)).toBe(1)
    // Only one global.
    expect(await page.evaluate(() => Object.keys(window).filter((k) => /marginalia/i.test(k)))).toEqual(['Marginalia'])
  })

  it('shows agent replies and questions live in the open thread; the person answers, reopens and deletes', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { page, pages } = await setup({ store, open: false })
    // An annotation made earlier (elsewhere) for this page: the overlay finds its session by URL.
    const session = await store.createSession({ url: `${pages.origin}/shop` })
    const note = await store.addAnnotation({ sessionId: session.id, comment: 'Checkout button overlaps the text', element: { selector: '#checkout' } })
    await openPage(page, `${pages.origin}/shop`)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await ui(page, '.pin').click()
    await eventually(() => ui(page, '.thread').isVisible()).toBe(true)
    expect(await ui(page, '.thread .comment').textContent()).toBe('Checkout button overlaps the text')

    const agent = await connect(store)
    cleanups.push(() => agent.close())
    expect((await agent.call('acknowledge', { id: note.id, message: 'On it: adding margin below the intro.' })).isError).toBeFalsy()
    await eventually(() => ui(page, '.thread .chip').textContent()).toBe('Acknowledged')
    await eventually(() => ui(page, '.thread .reply[data-author="agent"]').allTextContents()).toEqual([expect.stringContaining('On it: adding margin below the intro.')])
    expect(await ui(page, '.pin').getAttribute('data-status')).toBe('acknowledged')

    // The agent asks; the question stands out on the pin and in the thread; the person answers in the overlay.
    const asking = agent.call('ask', { id: note.id, question: 'Should it also move on mobile?', timeoutMs: 30_000 })
    await eventually(() => ui(page, '.thread .reply[data-open]').textContent()).toContain('Should it also move on mobile?')
    expect(await ui(page, '.pin').getAttribute('data-question')).toBe('')
    await ui(page, '.thread textarea').fill('Yes, on mobile too.')
    await ui(page, '.thread .reply-form button[type="submit"]').click()
    const answered = structured<{ status: string; answer: { message: string; author: string } }>(await asking)
    expect(answered.status).toBe('answered')
    expect(answered.answer).toMatchObject({ author: 'human', message: 'Yes, on mobile too.' })
    await eventually(() => ui(page, '.pin').getAttribute('data-question')).toBeNull()

    await agent.call('resolve', { id: note.id, summary: 'Added 16px margin; checked at 375px.' })
    await eventually(() => ui(page, '.thread .chip').textContent()).toBe('Resolved')
    expect(await ui(page, '.thread .reply').last().textContent()).toContain('Added 16px margin')

    // Reopen from the thread (the typed text goes along), then delete with a confirming second click.
    await ui(page, '.thread textarea').fill('Still overlaps at 320px.')
    await ui(page, '.thread').getByRole('button', { name: 'Reopen' }).click()
    await eventually(() => store.getAnnotation(note.id).status).toBe('pending')
    expect(store.getAnnotation(note.id).replies.at(-1)).toMatchObject({ author: 'human', message: 'Still overlaps at 320px.' })
    await ui(page, '.thread').getByRole('button', { name: 'Delete' }).click()
    await ui(page, '.thread').getByRole('button', { name: 'Confirm delete' }).click()
    await eventually(() => store.getAllPending().length).toBe(0)
    await eventually(() => ui(page, '.pin').count()).toBe(0)
    expect(await ui(page, '.thread').isVisible()).toBe(false)
  })

  it('tells whether an agent is listening, connected or absent', { timeout: 60_000 }, async () => {
    const { page, http, store } = await setup()
    const agentText = () => ui(page, '.agent').textContent()
    expect(await agentText()).toBe('No agent connected')
    // An agent over HTTP MCP: connected, then listening while it waits in watch_changes.
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const client = new Client({ name: 'browser-test-agent', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
    cleanups.push(() => client.close())
    await eventually(agentText).toBe('Agent connected')
    const watching = client.callTool({ name: 'watch_changes', arguments: { sinceRev: store.rev, timeoutMs: 1_500 } })
    await eventually(agentText).toBe('Agent listening')
    await watching
    // It stays "listening" a moment after a watch ends (the agent's loop calls again), then drops back.
    await eventually(agentText).toBe('Agent connected')
  })

  it('server down: says so, keeps the annotation, and sends it exactly once when the server is back', { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const first = await setup({ store })
    const { page, http } = first
    await fetchAnnotateMode(page)
    const port = http.port
    await http.close()
    await eventually(() => ui(page, '.agent').textContent()).toBe('Server unreachable')
    expect(await ui(page, '.alert').textContent()).toContain("Can't reach Marginalia")

    await annotate(page, '#checkout', 'Written while the server was down')
    await eventually(() => ui(page, '.alert').textContent()).toContain('1 annotation is kept in this browser')
    const kept = await page.evaluate(() => Object.entries(localStorage).filter(([k]) => k.startsWith('marginalia:outbox')).map(([, v]) => JSON.parse(v) as { body: { comment: string } }[]))
    expect(kept.flat().map((i) => i.body.comment)).toEqual(['Written while the server was down'])
    expect(store.getAllPending()).toHaveLength(0)
    // Kept, it has a pin already: no number yet, marked as waiting.
    await eventually(() => ui(page, '.pin[data-waiting]').textContent()).toBe('…')

    // The server comes back on the same port and store.
    const again = await startHttpServer(store, { port, log: () => {} })
    cleanups.push(() => again.close())
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Written while the server was down'])
    await eventually(() => ui(page, '.alert').isVisible()).toBe(false)
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    // Sent, the waiting pin is the server's numbered one (never two pins for it).
    await eventually(() => ui(page, '.pin').evaluate((el) => [el.textContent, el.hasAttribute('data-waiting')])).toEqual(['1', false])
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('marginalia:outbox')).length)).toBe(0)
    // Retries that race (online event, stream reconnect, backoff timer) never send it twice.
    await page.evaluate(async () => {
      window.dispatchEvent(new Event('online'))
      await window.Marginalia?.flush()
    })
    await new Promise((r) => setTimeout(r, 1_500))
    expect(store.getAllPending()).toHaveLength(1)
  })

  it('server down before the overlay fetched its chunks (no panel styles, no screenshot code): the person still writes and sends into the outbox, sent once it is back', { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { page, http, pageUrl } = await setup({ store, open: false })
    // No chunk arrives but annotate mode's until the server is back: as when it went away just after the person first pressed Annotate.
    let back = false
    await page.route('**/chunks/**', (r) => (back || /\/chunks\/(annotate|shared)-/.test(r.request().url()) ? r.continue() : r.abort()))
    await openPage(page, pageUrl)
    await fetchAnnotateMode(page)
    const port = http.port
    await http.close()
    await eventually(() => ui(page, '.agent').textContent()).toBe('Server unreachable')
    await annotate(page, '#checkout', 'Written before any chunk came')
    await eventually(() => ui(page, '.alert').textContent()).toContain('1 annotation is kept in this browser')
    back = true
    const again = await startHttpServer(store, { port, log: () => {} })
    cleanups.push(() => again.close())
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Written before any chunk came'])
  })

  it('annotate mode cannot be fetched (server gone before the person acted): the dock says so, and the next press fetches it again and annotates', { timeout: 90_000 }, async () => {
    const { store, page, pageUrl } = await setup({ open: false })
    let refuse = true
    await page.route('**/chunks/**', (r) => (refuse ? r.abort() : r.continue()))
    await openPage(page, pageUrl)
    await ui(page, '.annotate').click()
    await eventually(() => ui(page, '.toast').textContent()).toContain('Could not load annotate mode')
    expect(await ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    refuse = false
    await annotate(page, '#checkout', 'Once annotate mode came')
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Once annotate mode came'])
  })

  it('the settings menu cannot be fetched: the dock says so, the gear is not left expanded, and the next press opens the menu', { timeout: 90_000 }, async () => {
    const { page, pageUrl } = await setup({ open: false })
    let refuse = true
    await page.route('**/chunks/**', (r) => (refuse ? r.abort() : r.continue()))
    await openPage(page, pageUrl)
    await ui(page, '.settings-btn').click()
    await eventually(() => ui(page, '.toast').textContent()).toContain('Could not load the settings')
    expect(await ui(page, '.settings-btn').getAttribute('aria-expanded')).toBe('false')
    expect(await ui(page, '.menu').count()).toBe(0)
    refuse = false
    await ui(page, '.settings-btn').click()
    await ui(page, '.menu input[name="show-resolved"]').waitFor({ state: 'visible' })
    expect(await ui(page, '.settings-btn').getAttribute('aria-expanded')).toBe('true')
    // A press outside closes it, as before the menu was a chunk.
    await page.mouse.click(20, 20)
    await eventually(() => ui(page, '.menu').isVisible()).toBe(false)
    expect(await ui(page, '.settings-btn').getAttribute('aria-expanded')).toBe('false')
  })

  it('an annotation kept while the server was down is sent by the next page load once it is back', { timeout: 90_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { page, http, pageUrl } = await setup({ store })
    await fetchAnnotateMode(page)
    const port = http.port
    await http.close()
    await eventually(() => ui(page, '.agent').textContent()).toBe('Server unreachable')
    await annotate(page, '.card:nth-child(3) .buy', 'Kept across a reload')
    await eventually(() => ui(page, '.alert').textContent()).toContain('1 annotation is kept')
    // The person leaves the page; later the server is back and the page is opened again.
    await page.goto('about:blank')
    const again = await startHttpServer(store, { port, log: () => {} })
    cleanups.push(() => again.close())
    await openPage(page, pageUrl)
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Kept across a reload'])
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await new Promise((r) => setTimeout(r, 1_000))
    expect(store.getAllPending()).toHaveLength(1)
  })

  it('starts a new session when the remembered one is gone (a new store)', { timeout: 60_000 }, async () => {
    const { page, pageUrl, http, store, pages } = await setup({ open: false })
    await page.addInitScript(([key]) => localStorage.setItem(key!, 'ses_from_an_old_store'), [`marginalia:session:${http.url}:${pages.origin}/shop`])
    await openPage(page, pageUrl)
    await annotate(page, '#checkout', 'After a store reset')
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['After a store reset'])
    const [session] = store.listSessions()
    expect(session!.url).toBe(`${pages.origin}/shop`)
    expect(await page.evaluate((key) => localStorage.getItem(key), `marginalia:session:${http.url}:${pages.origin}/shop`)).toBe(session!.id)
  })

  it('follows client-side navigation: another path is another session with its own pins', { timeout: 60_000 }, async () => {
    const { page, store, pages } = await setup()
    await annotate(page, '#checkout', 'On the shop page')
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    await page.evaluate(() => history.pushState({}, '', '/other'))
    await eventually(() => ui(page, '.pin').count()).toBe(0)
    await annotate(page, '#intro', 'On the other page')
    await eventually(() => store.listSessions().map((s) => s.url).sort()).toEqual([`${pages.origin}/other`, `${pages.origin}/shop`])
    await eventually(() => ui(page, '.pin:not([data-waiting])').count()).toBe(1)
    expect(await ui(page, '.pin').getAttribute('aria-label')).toContain('On the other page')
    await page.evaluate(() => history.back())
    await eventually(() => ui(page, '.pin').getAttribute('aria-label')).toContain('On the shop page')
    expect(await ui(page, '.pin').count()).toBe(1)
    const shop = store.listSessions().find((s) => s.url.endsWith('/shop'))!
    expect(store.getPending(shop.id).map((a) => a.comment)).toEqual(['On the shop page'])
  })

  it('says plainly that a server started with --token cannot be used from the page', { timeout: 60_000 }, async () => {
    const { page, pageUrl } = await setup({ token: 'secret', open: false })
    await page.goto(pageUrl)
    await eventually(() => ui(page, '.alert').textContent()).toContain('requires a token')
  })

  it('window.Marginalia is exactly the documented API, and each part works', { timeout: 60_000 }, async () => {
    const { page, store, http } = await setup()
    const shape = await page.evaluate(() => {
      const m = window.Marginalia as unknown as Record<string, unknown>
      return Object.keys(m)
        .sort()
        .map((k) => `${k}:${typeof m[k]}`)
    })
    expect(shape).toEqual(['annotate:function', 'comment:function', 'destroy:function', 'flush:function', 'open:function', 'server:string', 'sessionId:undefined', 'version:string'])
    expect(await page.evaluate(() => window.Marginalia!.server)).toBe(http.url)
    // Annotate mode comes in a chunk: the first call fetches it, then acts.
    await page.evaluate(() => window.Marginalia!.annotate(true))
    await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
    await page.evaluate(() => window.Marginalia!.annotate())
    expect(await ui(page, '.annotate').getAttribute('aria-pressed')).toBe('false')
    await page.evaluate(() => window.Marginalia!.comment(document.querySelector('#checkout')!))
    await eventually(() => ui(page, '.composer').isVisible()).toBe(true)
    await ui(page, '.composer textarea').fill('Made through window.Marginalia')
    await ui(page, '.composer textarea').press('Control+Enter')
    await page.evaluate(() => window.Marginalia!.flush())
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['Made through window.Marginalia'])
    const [a] = store.getAllPending()
    await eventually(() => page.evaluate(() => window.Marginalia!.sessionId)).toBe(a!.sessionId)
    await page.evaluate((id) => window.Marginalia!.open(id), a!.id)
    await eventually(() => ui(page, '.thread .comment').textContent()).toBe('Made through window.Marginalia')
    await page.evaluate(() => window.Marginalia!.destroy())
    expect(await page.locator('marginalia-overlay').count()).toBe(0)
    expect(await page.evaluate(() => 'Marginalia' in window)).toBe(false)
  })

  it('is keyboard accessible: focusable controls with labels, Enter annotates the focused element, Esc closes', { timeout: 60_000 }, async () => {
    const { page, store } = await setup()
    expect(await ui(page, '.annotate').getAttribute('aria-keyshortcuts')).toBe('Alt+Shift+A')
    expect(await ui(page, '.count').getAttribute('aria-label')).toMatch(/Annotations on this page/)
    await page.keyboard.press('Alt+Shift+A')
    await page.locator('#checkout').focus()
    await page.keyboard.press('Enter')
    await eventually(() => ui(page, '.composer').isVisible()).toBe(true)
    // Focus moved into the comment box.
    expect(await page.evaluate(() => document.querySelector('marginalia-overlay')?.shadowRoot?.activeElement?.getAttribute('aria-label'))).toBe('Comment')
    await page.keyboard.type('Keyboard-made note')
    // Esc with text asks first, a second Esc discards.
    await page.keyboard.press('Escape')
    expect(await ui(page, '.composer').isVisible()).toBe(true)
    expect(await ui(page, '.composer .error').textContent()).toContain('Esc again')
    await page.keyboard.press('Escape')
    expect(await ui(page, '.composer').isVisible()).toBe(false)
    // Again, and send it with Ctrl+Enter.
    await page.locator('#checkout').focus()
    await page.keyboard.press('Enter')
    await page.keyboard.type('Keyboard-made note')
    await page.keyboard.press('Control+Enter')
    await eventually(() => store.getAllPending().map((a) => a.element?.selector)).toEqual(['#checkout'])
  })
})
