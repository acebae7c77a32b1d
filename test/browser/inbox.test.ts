/** The inbox page at `/`, in real Chromium, against a server and store started here. */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer, type HttpServer, type Store } from '../../src/index.js'
import { useChromium } from '../helpers/chromium.js'
import { connect } from '../helpers/mcp.js'
import { eventually } from '../helpers/eventually.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

async function setup(seed: (store: Store) => Promise<void> = async () => {}, path = '/'): Promise<{ store: Store; http: HttpServer; page: Page }> {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  await seed(store)
  const http = await startHttpServer(store, { port: 0, log: () => {} })
  cleanups.push(() => http.close())
  const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
  await page.goto(`${http.url}${path}`)
  await page.locator('#live[data-state="live"]').waitFor({ timeout: 15_000 })
  return { store, http, page }
}

const card = (page: Page, id: string) => page.locator(`article.card[data-id="${id}"]`)

describe.skipIf(!enabled)('inbox in Chromium', () => {
  it('lists sessions and annotations with status, replies and times; reopen, reply and delete reach the store', { timeout: 60_000 }, async () => {
    let done = ''
    let waiting = ''
    let gone = ''
    const { store, page } = await setup(async (store) => {
      const s = await store.createSession({ url: 'http://localhost:5173/checkout', name: 'Checkout' })
      done = (await store.addAnnotation({ sessionId: s.id, comment: 'Logo should link home', element: { selector: 'header .logo' } })).id
      await store.resolve(done, { summary: 'Wrapped it in a link.' })
      waiting = (await store.addAnnotation({ sessionId: s.id, comment: 'Tax jumps when the ZIP changes', intent: 'fix', severity: 'blocking' })).id
      gone = (await store.addAnnotation({ sessionId: s.id, comment: 'Typo in the footer' })).id
    }, '/?status=all')
    await eventually(() => page.locator('article.card').count()).toBe(3)
    expect(await page.locator('.session-head h2').textContent()).toBe('Checkout')
    expect(await card(page, done).locator('.chip').textContent()).toBe('Resolved')
    expect(await card(page, done).locator('.reply').textContent()).toContain('Wrapped it in a link.')
    expect(await card(page, done).locator('.when').textContent()).toMatch(/created just now · resolved just now/)
    expect(await card(page, waiting).locator('.tag').allTextContents()).toEqual(['fix', 'blocking'])
    await eventually(() => page.locator('.filter[data-filter="pending"] .n').textContent()).toBe('2')

    // Reopen the resolved one: the store has it pending again, and the page says so.
    await card(page, done).getByRole('button', { name: 'Reopen' }).click()
    await eventually(() => store.getAnnotation(done).status).toBe('pending')
    await eventually(() => card(page, done).locator('.chip').textContent()).toBe('Pending')
    await eventually(() => page.locator('.filter[data-filter="pending"] .n').textContent()).toBe('3')

    // Reply as the person.
    await card(page, waiting).getByRole('button', { name: 'Reply' }).click()
    await card(page, waiting).locator('textarea').fill('It happens on Safari only.')
    await card(page, waiting).getByRole('button', { name: 'Send reply' }).click()
    await eventually(() => store.getAnnotation(waiting).replies.map((r) => [r.author, r.message])).toEqual([['human', 'It happens on Safari only.']])
    await eventually(() => card(page, waiting).locator('.reply').textContent()).toContain('It happens on Safari only.')

    // Delete asks for a second click.
    await card(page, gone).getByRole('button', { name: 'Delete' }).click()
    expect(store.getAllPending().some((a) => a.id === gone)).toBe(true)
    await card(page, gone).getByRole('button', { name: 'Confirm delete' }).click()
    await eventually(() => store.getAllPending().some((a) => a.id === gone)).toBe(false)
    await eventually(() => card(page, gone).count()).toBe(0)
  })

  it('updates live: new annotations, agent replies, status changes and questions appear without a reload', { timeout: 60_000 }, async () => {
    const { store, page } = await setup()
    expect(await page.locator('#list').textContent()).toContain('No annotations yet')
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: s.id, comment: 'Header is misaligned' })
    await eventually(() => card(page, a.id).count()).toBe(1)

    const agent = await connect(store)
    cleanups.push(() => agent.close())
    await agent.call('acknowledge', { id: a.id, message: 'Looking.' })
    await eventually(() => card(page, a.id).locator('.chip').textContent()).toBe('Acknowledged')
    expect(await card(page, a.id).locator('.reply').textContent()).toContain('Looking.')

    // An open question shows at the top; answering it there reaches the agent.
    const asking = agent.call('ask', { id: a.id, question: 'Left-aligned or centered?', timeoutMs: 30_000 })
    await eventually(() => page.locator('#questions .q-text').textContent()).toBe('Left-aligned or centered?')
    expect(await card(page, a.id).locator('.tag.ask').count()).toBe(1)
    await page.locator('#questions textarea').fill('Centered.')
    await page.locator('#questions').getByRole('button', { name: 'Answer' }).click()
    const answered = (await asking).structuredContent as { status: string; answer: { message: string } }
    expect(answered).toMatchObject({ status: 'answered', answer: { message: 'Centered.' } })
    await eventually(() => page.locator('#questions').isVisible()).toBe(false)

    await agent.call('dismiss', { id: a.id, reason: 'Fixed upstream.' })
    await eventually(() => card(page, a.id).locator('.chip').textContent()).toBe('Dismissed')
    await eventually(() => page.locator('.filter[data-filter="dismissed"] .n').textContent()).toBe('1')
  })

  it('filters by status and loads big stores a page at a time', { timeout: 90_000 }, async () => {
    const { page } = await setup(async (store) => {
      const s = await store.createSession({ url: 'http://localhost:5173/big' })
      for (let i = 0; i < 130; i++) {
        const a = await store.addAnnotation({ sessionId: s.id, comment: `Note ${i}` })
        if (i % 10 === 0) await store.resolve(a.id)
      }
    }, '/?status=all&sort=oldest')
    // First page of 100, oldest first, and a button for the rest.
    await eventually(() => page.locator('article.card').count()).toBe(100)
    expect(await page.locator('article.card .comment').first().textContent()).toBe('Note 0')
    await page.getByRole('button', { name: /Load more \(30 more\)/ }).click()
    await eventually(() => page.locator('article.card').count()).toBe(130)
    expect(await page.getByRole('button', { name: /Load more/ }).count()).toBe(0)

    await page.locator('.filter[data-filter="resolved"]').click()
    await eventually(() => page.locator('article.card').count()).toBe(13)
    expect(new URL(page.url()).searchParams.get('status')).toBe('resolved')
    expect(await page.locator('.filter[data-filter="resolved"]').getAttribute('aria-pressed')).toBe('true')
    expect(await page.locator('.filter[data-filter="resolved"] .n').textContent()).toBe('13')
    expect(await page.locator('.filter[data-filter="all"] .n').textContent()).toBe('130')
    // The filter survives a reload (it is in the URL).
    await page.reload()
    await eventually(() => page.locator('article.card').count()).toBe(13)
  })
})
