/**
 * The extension's steps recorder and the `maskInputs` setting: what the person typed is kept on a
 * local dev origin, masked by default on any other origin, and masked everywhere once the setting
 * says so — in the steps the page holds and in the annotation the agent gets.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { browserTestsEnabled } from '../../helpers/chromium.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { startMarginalia } from '../../helpers/page.js'
import { EXTENSION_ORIGIN, configure, launchWithExtension, registeredMatches, serveSite } from './helpers.js'

const enabled = browserTestsEnabled()
const cleanups = useCleanups()

const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const SHOP = `<!doctype html><html><head><meta charset="utf-8"><title>Cart</title></head><body style="font:16px sans-serif;margin:40px">
<h1>Cart</h1><label>Coupon code <input id="coupon"></label> <button id="apply">Apply</button></body></html>`
/** A site name that is not a local dev origin, served from the loopback by a host resolver rule. */
const NAMED = 'shop.example'

type TypeStep = { kind: string; value?: string; masked?: boolean }

/** Type `text` in the coupon field and leave it; the type step the page's recorder holds for it. */
async function typeCoupon(page: Page, text: string): Promise<TypeStep | undefined> {
  await page.locator('marginalia-overlay .annotate').waitFor({ timeout: 15_000 })
  await page.click('#coupon')
  await page.keyboard.type(text)
  await page.keyboard.press('Tab')
  return page.evaluate(() => {
    const steps = (window as unknown as Record<symbol, { recent(): TypeStep[] } | undefined>)[Symbol.for('marginalia.steps')]
    return steps?.recent().find((s) => s.kind === 'type')
  })
}

describe.skipIf(!enabled)('the extension honours maskInputs', () => {
  it('keeps typed values on a local dev origin, masks them by default elsewhere and everywhere with maskInputs on; the annotation carries the same', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups, { allowOrigins: [EXTENSION_ORIGIN] })
    const site = await serveSite(cleanups, { '/': [HTML, SHOP] })
    const port = new URL(site.origin).port
    const named = `http://${NAMED}:${port}`
    const { context, worker } = await launchWithExtension(cleanups, ['http://127.0.0.1/*', `http://${NAMED}/*`], [`--host-resolver-rules=MAP ${NAMED} 127.0.0.1`])
    await configure(worker, { server: http.url, sites: [site.origin, named] })
    await eventually(async () => (await registeredMatches(worker)).sort()).toEqual([`${named}/*`, `${site.origin}/*`].sort())

    // A local dev origin, no setting: the value is kept.
    const local = await context.newPage()
    await local.goto(`${site.origin}/`)
    expect(await typeCoupon(local, 'SAVE10')).toMatchObject({ kind: 'type', value: 'SAVE10' })

    // Another origin, no setting: masked by default, in the page and in what the agent gets.
    const remote = await context.newPage()
    await remote.goto(`${named}/`)
    const masked = await typeCoupon(remote, 'SAVE20')
    expect(masked).toMatchObject({ kind: 'type', masked: true })
    expect(masked?.value).toBeUndefined()
    await remote.focus('#apply')
    await remote.keyboard.press('Alt+Shift+A')
    await remote.keyboard.press('Enter')
    await remote.locator('marginalia-overlay .composer textarea').waitFor()
    await remote.keyboard.type('The coupon is ignored')
    await remote.keyboard.press('Control+Enter')
    await eventually(() => store.getAllPending().length).toBe(1)
    const [a] = store.getAllPending()
    expect(a!.steps?.find((s) => s.kind === 'type')).toMatchObject({ masked: true })
    expect(JSON.stringify(a)).not.toContain('SAVE20')

    // maskInputs on (the options page's key): the local origin is masked too.
    await worker.evaluate('chrome.storage.sync.set({ maskInputs: true })')
    const again = await context.newPage()
    await again.goto(`${site.origin}/`)
    const now = await typeCoupon(again, 'SAVE30')
    expect(now).toMatchObject({ kind: 'type', masked: true })
    expect(now?.value).toBeUndefined()
  })
})
