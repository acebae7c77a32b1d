/**
 * Login CSRF: another site sends a signed-in person to `/sign-in#code=<someone else's code>`.
 * The page asks before it replaces the session this browser has; until the person confirms,
 * their session stays and the code is not used.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { parseSecret } from '../../../src/auth/credentials.js'
import { addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages } from '../../helpers/page.js'

const chromium = useChromium({ args: ['--host-resolver-rules=MAP mg.test 127.0.0.1, MAP evil.test 127.0.0.1'] })
const { enabled, cleanups } = chromium

const session = async (page: Page) => (await page.evaluate("JSON.parse(localStorage.getItem('marginalia.session') || 'null')")) as { name: string; token: string } | null

describe.skipIf(!enabled)('the sign-in page with a session already in the browser', () => {
  it('asks before replacing it; a cross-site navigation alone changes nothing; confirming signs in with the link', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    let mgUrl = ''
    const pages = await servePages({ '/lure': () => `<!doctype html><title>lure</title><a id="go" href="${mgUrl}/sign-in#code=${encodeURIComponent(attackerCode)}">win a prize</a><script>location.href = document.getElementById('go').href</script>` }, cleanups)
    const http = await startHttpServer(store, { port: 0, log: () => {}, team: { publicUrl: 'http://mg.test' } })
    cleanups.push(() => http.close())
    mgUrl = `http://mg.test:${http.port}`
    const alice = await addPerson(store, 'Alice Martin', { publicUrl: mgUrl })
    const mallory = await addPerson(store, 'Mallory', { publicUrl: mgUrl })
    const attackerCode = decodeURIComponent(new URL(mallory.link).hash.replace(/^#code=/, ''))
    const unused = () => store.identities.credential(parseSecret(attackerCode)!.id) !== undefined

    const { page } = await chromium.newPage()
    await page.goto(alice.link)
    await page.locator('#status', { hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    const before = await session(page)
    expect(before?.name).toBe('Alice Martin')
    expect(unused()).toBe(true)

    // Another site sends the browser to the sign-in page with the attacker's code.
    await page.goto(`${pages.origin.replace('127.0.0.1', 'evil.test')}/lure`)
    await page.waitForURL(`${mgUrl}/sign-in`)
    await page.locator('#question', { hasText: 'This browser is signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    expect((await session(page))?.token).toBe(before?.token)
    expect(unused()).toBe(true)

    // Keeping the session: nothing changes, the code stays unused.
    await page.getByRole('button', { name: 'Stay signed in as before' }).click()
    await page.locator('#status', { hasText: 'Signed in as Alice Martin' }).waitFor({ timeout: 15_000 })
    expect((await session(page))?.token).toBe(before?.token)
    expect(unused()).toBe(true)

    // Opening the link again and confirming signs in with it.
    await page.goto('about:blank') // from /sign-in, only the fragment would change: no new page load
    await page.goto(mallory.link)
    await page.getByRole('button', { name: 'Sign in with this link' }).click()
    await page.locator('#status', { hasText: 'Signed in as Mallory' }).waitFor({ timeout: 15_000 })
    expect((await session(page))?.name).toBe('Mallory')
    expect(unused()).toBe(false)
  })
})
