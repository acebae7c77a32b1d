/**
 * The browser extension and a team server in real Chromium: the person opens their sign-in link,
 * signs in from the extension's options page (the server's popup hands a session to the
 * extension's exact origin, which the server was told to trust), annotates a site as themselves,
 * and signing out from the overlay ends the session on the server; a revocation ends it too. The toolbar popup says the
 * server's state, that the site is on, and who is signed in.
 */
import { describe, expect, it } from 'vitest'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { addPerson, newSignInLink } from '../../../src/auth/identities.js'
import { browserTestsEnabled } from '../../helpers/chromium.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { EXTENSION_ID, EXTENSION_ORIGIN, configure, launchWithExtension, registeredMatches, serveSite } from './helpers.js'

const enabled = browserTestsEnabled()
const cleanups = useCleanups()

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)
const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const SHOP = '<!doctype html><html><head><meta charset="utf-8"><title>Staging shop</title></head><body style="font:16px sans-serif;margin:40px"><h1>Staging shop</h1><button id="buy">Buy now</button></body></html>'

/** The server's sign-in popup hands the session over and closes; what it says otherwise is the failure. */
async function closed(popup: Page, which = ''): Promise<void> {
  // It may have closed already: a fast machine hands the session over before the test listens.
  if (popup.isClosed()) return
  await popup.waitForEvent('close', { timeout: 15_000 }).catch(async (e: unknown) => {
    if (popup.isClosed()) return
    throw new Error(`the sign-in popup ${which} stayed open (${String(e)}), saying: ${await popup.locator('body').innerText()}`)
  })
}

describe.skipIf(!enabled)('the browser extension with a team server in Chromium', () => {
  it('signs in from the extension, annotates as the person, the popup says who; signing out ends the session on the server; so does revocation', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN] })
    const alice = await addPerson(store, 'Alice Martin', { publicUrl: http.url })
    const site = await serveSite(cleanups, { '/': [HTML, SHOP] })
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*'])
    await configure(worker, { server: http.url, sites: [site.origin] })
    await eventually(() => registeredMatches(worker)).toEqual([`${site.origin}/*`])

    // 1. The sign-in link, on the server's own origin.
    const link = await context.newPage()
    await link.goto(alice.link)
    await link.getByText('Signed in as Alice Martin').waitFor({ timeout: 15_000 })
    await link.close()

    // 2. Sign in from the extension's options page: the server's popup answers the extension's origin.
    const options = await context.newPage()
    await options.goto(`${EXTENSION_ORIGIN}/options.html`)
    await options.locator('#who').filter({ hasText: 'Not signed in' }).waitFor({ timeout: 15_000 })
    expect(await options.locator('#allow').textContent()).toBe(`marginalia serve --allow-origin chrome-extension://${EXTENSION_ID}`)
    const [popup] = await Promise.all([options.waitForEvent('popup'), options.locator('#sign-in').click()])
    await closed(popup)
    await options.locator('#who').filter({ hasText: 'as Alice Martin' }).waitFor({ timeout: 15_000 })
    const token = (await worker.evaluate('chrome.storage.local.get("session").then((s) => s.session.token)')) as string
    expect(token.length).toBeGreaterThan(20)

    // 3. On the site: the overlay says who, and the annotation carries the person.
    const page = await context.newPage()
    await page.goto(`${site.origin}/`)
    await ui(page, '.who-name').filter({ hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.includes('session@')))).toEqual([]) // the token stays in the extension
    await ui(page, '.annotate').click()
    await page.locator('#buy').click()
    await ui(page, '.composer textarea').fill('Price is missing')
    await ui(page, '.composer button[type="submit"]').click()
    await eventually(() => store.listAnnotations().length).toBe(1)
    expect(store.listAnnotations()[0]!.by).toMatchObject({ name: 'Alice Martin', kind: 'person' })

    // 4. The toolbar popup (a window of its own, so the site stays the active tab): server up, on for this site, who.
    const [shown] = await Promise.all([context.waitForEvent('page'), worker.evaluate(`chrome.windows.create({ url: chrome.runtime.getURL('popup.html'), type: 'popup', width: 320, height: 360 })`)])
    await shown.setViewportSize({ width: 300, height: 330 })
    await shown.locator('#toggle').filter({ hasText: 'On for this site' }).waitFor({ timeout: 15_000 })
    expect(await shown.locator('#site').textContent()).toBe(site.origin)
    expect(await shown.locator('#state').textContent()).toBe('Connected · team server')
    expect(await shown.locator('#who-text').textContent()).toBe('Signed in as Alice Martin')
    expect(await shown.locator('#inbox').getAttribute('href')).toBe(`${http.url}/`)
    const shots = process.env.MARGINALIA_SCREENSHOTS
    if (shots) {
      mkdirSync(shots, { recursive: true })
      await shown.screenshot({ path: path.join(shots, 'extension-popup.png'), fullPage: true })
    }
    await shown.close()

    // 5. Signing out in the overlay ends the session here and on the server.
    await ui(page, '.signed-in .sign-out').click()
    await ui(page, '.signed-in .sign-in').waitFor({ timeout: 15_000 })
    await eventually(async () => (await fetch(`${http.url}/api/annotations`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401)
    await eventually(() => worker.evaluate('chrome.storage.local.get("session").then((s) => s.session ?? null)')).toBeNull()

    // 6. Signed in again (signing out ended the whole sign-in: a new link), then revoked by the operator:
    //    the open page hears it and the extension forgets the session.
    const second = await context.newPage()
    await second.goto((await newSignInLink(store, alice.identity.id, { publicUrl: http.url })).link)
    await second.getByText('Signed in as Alice Martin').waitFor({ timeout: 15_000 })
    await second.close()
    await options.bringToFront()
    await options.reload()
    await options.locator('#who').filter({ hasText: 'Not signed in' }).waitFor({ timeout: 15_000 })
    const [again] = await Promise.all([options.waitForEvent('popup'), options.locator('#sign-in').click()])
    await closed(again, 'again')
    await ui(page, '.who-name').filter({ hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    await store.identities.revoke(alice.identity.id)
    await ui(page, '.signed-in .sign-in').waitFor({ timeout: 20_000 })
    await eventually(() => worker.evaluate('chrome.storage.local.get("session").then((s) => s.session ?? null)')).toBeNull()
  })
})
