/** The inbox's webhooks panel in real Chromium: add an endpoint (its secret once), see its delivery log, test it. */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { startReceiver } from '../../helpers/webhook-receiver.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

describe.skipIf(!enabled)('the inbox webhooks panel', () => {
  it('adds an endpoint, shows its secret once, its delivery log and a test', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const receiver = await startReceiver((n) => (n === 0 ? 503 : 204))
    cleanups.push(() => receiver.close())
    const http = await startHttpServer(store, { port: 0, log: () => {}, webhooks: { retryBaseMs: 50 } })
    cleanups.push(() => http.close())
    const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(`${http.url}/`)
    const panel = page.locator('#webhooks')
    await panel.locator('summary').waitFor({ timeout: 15_000 })
    await panel.locator('summary').click()
    await panel.getByLabel('Endpoint URL').fill(receiver.url)
    await panel.getByLabel('Description').fill('#design channel')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = (await panel.locator('.secret code').textContent({ timeout: 10_000 }))!
    expect(secret).toMatch(/^whsec_/)
    receiver.secret = secret

    const session = await store.createSession({ url: 'http://localhost:5173/' })
    await store.addAnnotation({ sessionId: session.id, comment: 'The Buy button is grey' })
    await eventually(() => receiver.deliveries.filter((d) => d.status === 204).length).toBe(1)
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true)
    await panel.getByRole('button', { name: 'Test' }).click()
    await eventually(() => receiver.deliveries.some((d) => d.body.type === 'webhook.test')).toBe(true)
    await eventually(() => panel.locator('table tr[data-ok]').count(), 20_000).toBe(3)
    const rows = await panel.locator('table tr[data-ok]').allTextContents()
    expect(rows.join('\n')).toMatch(/webhook\.test/)
    expect(rows.join('\n')).toMatch(/annotation\.created.*503/)
    expect(await panel.locator('.endpoint header').textContent()).toContain('#design channel')
    // The secret is gone once the panel refreshes after an action, and never comes back from the server.
    expect(await panel.textContent()).not.toContain(secret)
    await page.screenshot({ path: '/tmp/webhooks-panel.png' })
  })
})
