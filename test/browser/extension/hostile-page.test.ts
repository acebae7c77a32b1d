/**
 * A listed site whose own script turns against the extension, in real Chromium: the page's first
 * inline script replaces the globals the overlay uses (`encodeURIComponent` → `../agents?`,
 * `JSON.stringify` choosing the body, `Response.prototype.json/text` reading every answer),
 * writes an item into the overlay's outbox and calls `Marginalia.flush()` — with an admin signed
 * in to the extension. Variants: prototype pollution, a replaced `fetch`, `URL` and
 * `Array.prototype`, a flood of fake bridge messages. The extension's worker performs named
 * operations on the site's own sessions only: no agent, person or sign-in link is minted, and
 * nothing of another site is read.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { addPerson, Authenticator } from '../../../src/auth/identities.js'
import type { Store } from '../../../src/index.js'
import { browserTestsEnabled } from '../../helpers/chromium.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { EXTENSION_ORIGIN, configure, launchWithExtension, registeredMatches, serveSite } from './helpers.js'

const enabled = browserTestsEnabled()
const cleanups = useCleanups()

const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const page = (title: string, script: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><script>${script}</script></head><body style="font:16px sans-serif;margin:40px"><h1>${title}</h1><button id="buy">Buy</button></body></html>`

/** The attack of the report: the overlay's own request becomes `/api/sessions/../agents?/annotations`, its body and answer the page's. */
function hijack(server: string, payloads: string[]): string {
  return `(() => {
  const seen = (window.__seen = [])
  const realStringify = JSON.stringify
  const realEncode = encodeURIComponent
  // An id the overlay puts in a path becomes the page's payload (the test sets it per round).
  window.__payload = ${JSON.stringify(payloads[0])}
  window.encodeURIComponent = (v) => (/^(ses|ann)_/.test(String(v)) ? window.__payload : realEncode(v))
  JSON.stringify = function (v, ...rest) {
    // The annotation's body becomes the body of whatever route the path now names.
    if (v && typeof v === 'object' && 'comment' in v && !Array.isArray(v)) return realStringify({ name: 'evil agent', role: 'admin' })
    return realStringify(v, ...rest)
  }
  const realText = Response.prototype.text
  Response.prototype.text = async function () { const t = await realText.call(this); seen.push(t); return t }
  Response.prototype.json = async function () { const t = await realText.call(this); seen.push(t); return JSON.parse(t) }
  window.__plant = () => localStorage.setItem(${JSON.stringify(`marginalia:outbox:${server}`)}, realStringify([{ id: 'evil-' + Math.random(), queuedAt: new Date().toISOString(), pageKey: location.origin + location.pathname, attempts: 0, body: { comment: 'hi', url: location.href } }]))
  window.__plant()
})()`
}

/** The variants: polluted prototypes, replaced fetch, URL, Array.prototype, and a flood of fake bridge ports. */
function pollute(server: string, payloads: string[]): string {
  return `${hijack(server, payloads)};(() => {
  for (const [k, v] of Object.entries({ op: 'createAgent', session: '../agents', annotation: '../../api/agents', url: ${JSON.stringify(`${server}/api/agents`)}, method: 'POST', path: '/api/agents', body: '{"name":"evil"}', query: { name: 'evil' } })) Object.prototype[k] = v
  const realFetch = window.fetch
  window.fetch = (input, init) => realFetch(${JSON.stringify(`${server}/api/agents`)}, { ...init, method: 'POST', body: '{"name":"evil"}' })
  const RealURL = URL
  window.URL = function (u, b) { return new RealURL(${JSON.stringify(`${server}/api/agents`)}) }
  window.URL.prototype = RealURL.prototype
  Array.prototype.every = function () { return true }
  Array.prototype.includes = function () { return true }
  for (let i = 0; i < 300; i++) {
    const { port1, port2 } = new MessageChannel()
    port1.onmessage = (e) => window.__seen.push('port:' + realStringify(e.data))
    window.postMessage({ type: 'marginalia:extension-bridge' }, '*', [port2])
    port1.postMessage({ type: 'fetch', request: { url: ${JSON.stringify(`${server}/api/agents`)}, method: 'POST', headers: {}, body: '{"name":"evil"}' } })
    port1.postMessage({ type: 'op', operation: { op: 'createAgent' } })
  }
})()`
}

const JSON_TEXT = (v: unknown) => JSON.stringify(v)

async function signedInAdmin(store: Store, serverUrl: string): Promise<{ token: string; id: string; name: string; expiresAt: string }> {
  const admin = await addPerson(store, 'Ada Admin', { role: 'admin', publicUrl: serverUrl })
  const code = decodeURIComponent(admin.link.split('#code=')[1]!)
  const { token, identity, expiresAt } = await new Authenticator(store).redeem(code, 3_600_000)
  return { token, id: identity.id, name: identity.name, expiresAt }
}

interface Hostile {
  __payload: string
  __plant(): void
  __seen: string[]
  Marginalia: { flush(): Promise<void> }
}

/** One round: the payload set, an item planted in the outbox, `Marginalia.flush()`, until the overlay has tried it (sent, or given up for now). */
async function attackWith(tab: Page, server: string, payload: string): Promise<void> {
  await tab.waitForFunction(() => 'Marginalia' in window, undefined, { timeout: 20_000 })
  await tab.evaluate((p) => {
    const w = window as unknown as Hostile
    w.__payload = p
    w.__plant()
    return w.Marginalia.flush().catch(() => {})
  }, payload)
  await eventually(
    () =>
      tab.evaluate((key) => {
        const raw = localStorage.getItem(key)
        const items = raw === null ? [] : (JSON.parse(raw) as { attempts: number; lastError?: string }[])
        return items.every((i) => i.attempts > 0 || i.lastError !== undefined)
      }, `marginalia:outbox:${server}`),
    20_000,
  ).toBe(true)
}

describe.skipIf(!enabled)('a hostile listed site and the extension in Chromium', () => {
  it('a page that replaces the overlay\'s globals mints no agent token, person or sign-in link, and reads nothing of another site, with an admin signed in', { timeout: 120_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN] })
    const session = await signedInAdmin(store, http.url)

    // Another site the person annotated: its session and annotation ids are what the hostile page aims at.
    const other = await store.createSession({ url: 'https://bank.example/transfer', name: 'Bank' })
    const secret = await store.addAnnotation({ sessionId: other.id, comment: 'OTHER-SITE-SECRET', url: 'https://bank.example/transfer' })
    const payloads = ['../agents?', '../people?', '../identities?', other.id, secret.id, `${other.id}/../../agents`, '..%2Fagents']

    const routes: Record<string, [Record<string, string>, string]> = {}
    const site = await serveSite(cleanups, routes)
    routes['/'] = [HTML, page('Hijacked shop', hijack(http.url, payloads))]
    routes['/polluted'] = [HTML, page('Polluted shop', pollute(http.url, payloads))]
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*'])
    await configure(worker, { server: http.url, sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])
    await worker.evaluate(`chrome.storage.local.set({ session: ${JSON_TEXT({ ...session, server: http.url })} })`)
    const before = store.identities.list().map((i) => i.id)

    for (const path of ['/', '/polluted']) {
      const tab = await context.newPage()
      await tab.goto(`${site.origin}${path}`)
      for (const payload of payloads) await attackWith(tab, http.url, payload)
      const seen = (await tab.evaluate(() => (window as unknown as { __seen: string[] }).__seen)).join('\n')
      // Nothing minted: the same people and agents, no new credential handed to the page.
      expect(store.identities.list().map((i) => i.id), path).toEqual(before)
      expect(store.identities.list().filter((i) => i.kind === 'agent'), path).toEqual([])
      expect(seen, path).not.toMatch(/mwt1_|mat_|sign-in#code=|"token"/)
      // Nothing of the other site reached the page.
      expect(seen, path).not.toContain('OTHER-SITE-SECRET')
      expect(seen, path).not.toContain('bank.example')
      // The other site's annotation is as it was.
      expect(store.getAnnotation(secret.id).replies ?? []).toEqual([])
      await tab.close()
    }
  })
})
