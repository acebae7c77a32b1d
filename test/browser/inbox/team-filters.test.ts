/**
 * The team inbox in Chromium: the inbox filters by who wrote an annotation and by which agent replied.
 * Two people and two agents work through REST with their own tokens; Bob (a person, who may not
 * read the list of identities) signs in with his link and filters: each choice shows exactly
 * that person's or agent's annotations, the URL keeps it across a reload, a new agent that replies
 * live becomes a choice, and the header still fits a 375 px phone.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { addAgent, newSignInLink } from '../../../src/auth/identities.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { request } from '../../helpers/http.js'
import { bearer, seedTeam } from '../../helpers/who-seed.js'
import { startMarginalia } from '../../helpers/page.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const shown = (page: Page) => page.locator('article.card').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')).sort())
const options = (page: Page, label: string) => page.locator(`select[aria-label="${label}"] option`).evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).text))

describe.skipIf(!enabled)('inbox: filter by who wrote and which agent replied', () => {
  it('each person and each agent shows exactly theirs, in the URL across reload, combined with the status tab; fits 375 px', { timeout: 90_000 }, async () => {
    const { store, http } = await startMarginalia(cleanups)
    const { people, agents, annotations: { local, a1, b1, a2 } } = await seedTeam(store, http.url)
    const sorted = (...list: { id: string }[]) => list.map((a) => a.id).sort()

    const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    // Bob signs in on the server's origin with a fresh link (his first one was used by the seeding).
    const { link } = await newSignInLink(store, people.bob.identity.id, { publicUrl: http.url })
    await page.goto(link)
    await page.getByText('Signed in as Bob Stone').waitFor({ timeout: 15_000 })
    await page.goto(`${http.url}/?status=all`)
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 20_000 })
    await eventually(() => shown(page)).toEqual(sorted(local, a1, b1, a2))

    // The choices come from the data (Bob may not list identities): both people, "you", both agents.
    await eventually(() => options(page, 'Written by')).toEqual(['By anyone', 'By you (local)', 'By Alice Martin', 'By Bob Stone'])
    await eventually(() => options(page, 'Agent')).toEqual(['Any agent', 'ci-agent replied', 'review-bot replied'])

    const choose = async (label: string, value: string, expected: string[]) => {
      await page.locator(`select[aria-label="${label}"]`).selectOption(value)
      await eventually(() => shown(page)).toEqual(expected)
    }
    await choose('Written by', people.alice.identity.id, sorted(a1, a2))
    expect(new URL(page.url()).searchParams.get('by')).toBe(people.alice.identity.id)
    await choose('Written by', people.bob.identity.id, sorted(b1))
    await choose('Written by', 'you', sorted(local))
    await choose('Written by', '', sorted(local, a1, b1, a2))
    await choose('Agent', agents.ci.identity.id, sorted(a1, b1))
    await choose('Agent', agents.bot.identity.id, sorted(a2))
    // Combined with a person and with the status tab.
    await choose('Agent', agents.ci.identity.id, sorted(a1, b1))
    await choose('Written by', people.alice.identity.id, sorted(a1))
    await page.locator('button[data-filter="pending"]').click()
    await eventually(() => shown(page)).toEqual([])
    await page.locator('button[data-filter="acknowledged"]').click()
    await eventually(() => shown(page)).toEqual(sorted(a1))

    // The URL keeps the filters across a reload; Back returns to the view before.
    const url = new URL(page.url())
    expect([url.searchParams.get('by'), url.searchParams.get('agent'), url.searchParams.get('status')]).toEqual([people.alice.identity.id, agents.ci.identity.id, 'acknowledged'])
    await page.reload()
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 20_000 })
    await eventually(() => shown(page)).toEqual(sorted(a1))
    expect(await page.locator('select[aria-label="Written by"]').inputValue()).toBe(people.alice.identity.id)
    expect(await page.locator('select[aria-label="Agent"]').inputValue()).toBe(agents.ci.identity.id)
    await page.goBack()
    await eventually(() => shown(page)).toEqual([])
    await page.goForward()
    await eventually(() => shown(page)).toEqual(sorted(a1))

    // Live: a third agent replies to Bob's annotation; it becomes a choice, and choosing it shows that one.
    const qa = await addAgent(store, 'qa-bot')
    const r = await request(`${http.url}/api/annotations/${b1.id}/replies`, { method: 'POST', headers: bearer(qa.token), body: { message: 'qa-bot: reproduced on Safari' } })
    expect(r.status).toBe(201)
    await eventually(() => options(page, 'Agent')).toContain('qa-bot replied')
    await page.locator('button[data-filter="all"]').click()
    await page.locator('select[aria-label="Written by"]').selectOption('')
    await choose('Agent', qa.identity.id, sorted(b1))

    // A 375 px phone: the header and every select stay on screen.
    await page.setViewportSize({ width: 375, height: 667 })
    const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, header: document.querySelector('.top-inner')!.scrollWidth }))
    expect(widths.doc).toBeLessThanOrEqual(375)
    expect(widths.header).toBeLessThanOrEqual(375)
    for (const label of ['Sort', 'Page', 'Intent', 'Severity', 'Replies by', 'Written by', 'Agent']) {
      const box = (await page.locator(`select[aria-label="${label}"]`).boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(375)
    }
    await page.screenshot({ path: '/tmp/inbox-who-375.png', fullPage: false })
  })

  it('local use with nobody added: the header is as before (no people or agent select), ?by=you still filters', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const mine = await store.addAnnotation({ sessionId: session.id, comment: 'The title is too big' })
    const http = await startHttpServer(store, { port: 0, log: () => {} })
    cleanups.push(() => http.close())
    const { page } = await chromium.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(`${http.url}/`)
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 20_000 })
    await eventually(() => shown(page)).toEqual([mine.id])
    expect(await page.locator('select[aria-label="Written by"]').isVisible()).toBe(false)
    expect(await page.locator('select[aria-label="Agent"]').isVisible()).toBe(false)
    await page.goto(`${http.url}/?by=you`)
    await eventually(() => shown(page)).toEqual([mine.id])
    expect(await page.locator('select[aria-label="Written by"]').inputValue()).toBe('you')
  })
})
