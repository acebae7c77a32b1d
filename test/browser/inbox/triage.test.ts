/**
 * The inbox as a triage tool, in real Chromium, with 500 annotations in the store:
 * newest open first, server totals, live inserts marked new, sort, search, filters, bulk actions
 * on a selection, copy as Markdown, focus after actions, Esc / Ctrl+Enter, pasted images in a
 * reply, long comments collapsed, and a header that fits a 375 px phone.
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createMemoryStore, startHttpServer, type Annotation, type Store } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { deterministic, tempDir } from '../../helpers/store.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
/** Where to save screenshots to look at by hand (not compared): MARGINALIA_SHOTS=dir; none when unset. */
const SHOTS = process.env.MARGINALIA_SHOTS
async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return
  mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, name) })
}

const INTENTS = ['fix', 'change', 'question', undefined] as const
const SEVERITIES = ['blocking', 'important', 'suggestion', undefined] as const

/** 500 annotations over three pages: every 5th resolved, every 7th acknowledged, a few with agent replies, one very long. */
async function seed500(store: Store): Promise<{ sessions: string[]; all: Annotation[] }> {
  const sessions = [
    (await store.createSession({ url: 'http://localhost:5173/', name: 'Home' })).id,
    (await store.createSession({ url: 'http://localhost:5173/cart', name: 'Cart' })).id,
    (await store.createSession({ url: 'http://localhost:5173/settings', name: 'Settings' })).id,
  ]
  const all: Annotation[] = []
  for (let i = 0; i < 500; i++) {
    const intent = INTENTS[i % 4]
    const severity = SEVERITIES[(i >> 1) % 4]
    const comment = i === 497 ? `Checkout total is wrong. ${'The numbers do not add up. '.repeat(60)}` : i % 50 === 3 ? `Checkout button ${i} overlaps the footer` : `Note ${i}`
    const a = await store.addAnnotation({ sessionId: sessions[i % 3]!, comment, element: { selector: `li:nth-of-type(${i + 1})`, tag: 'li', text: `Row ${i}` }, ...(intent ? { intent } : {}), ...(severity ? { severity } : {}) })
    if (i % 5 === 0) await store.resolve(a.id)
    else if (i % 7 === 0) await store.acknowledge(a.id)
    if (i % 40 === 1) await store.reply(a.id, { author: 'agent', message: `Do you mean the PAYMENT step? (${i})` })
    all.push(a)
  }
  return { sessions, all }
}

async function setup(viewport = { width: 1200, height: 900 }, at = '/'): Promise<{ store: Store; page: Page; stop: () => Promise<void> } & Awaited<ReturnType<typeof seed500>>> {
  const archive = tempDir()
  cleanups.push(archive.cleanup)
  const store = createMemoryStore({ ...deterministic(), archiveDirectory: archive.dir })
  cleanups.push(() => store.close())
  const seeded = await seed500(store)
  const http = await startHttpServer(store, { port: 0, log: () => {} })
  let stopped: Promise<void> | undefined
  const stop = () => (stopped ??= http.close())
  cleanups.push(stop)
  const context = await chromium.browser.newContext({ viewport })
  cleanups.push(() => context.close())
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: http.url })
  const page = await context.newPage()
  await page.goto(`${http.url}${at}`)
  await page.locator('#live[data-state="live"]').waitFor({ timeout: 20_000 })
  await eventually(() => page.locator('article.card').count(), 30_000).toBeGreaterThan(0)
  return { store, page, stop, ...seeded }
}

const card = (page: Page, id: string) => page.locator(`article.card[data-id="${id}"]`)
const open = (a: Annotation) => a.status === 'pending' || a.status === 'acknowledged'
const newestFirst = (list: Annotation[]) => [...list].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1))
/** Cards come grouped by page: groups in the order of their first annotation, each in the list's order. */
function grouped(list: Annotation[]): string[] {
  const groups = new Map<string, string[]>()
  for (const a of list) groups.set(a.sessionId, [...(groups.get(a.sessionId) ?? []), a.id])
  return [...groups.values()].flat()
}
const cardIds = (page: Page) => page.locator('article.card').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))
const focused = (page: Page) => page.evaluate(() => {
  const el = document.activeElement as HTMLElement | null
  return { action: el?.dataset.action ?? el?.dataset.bulk ?? el?.tagName, card: el?.closest('article.card')?.getAttribute('data-id') ?? null }
})

describe.skipIf(!enabled)('inbox triage in Chromium (500 annotations)', () => {
  it('opens on the newest open annotations with the server totals per status and page; new ones arrive live, on top, marked New; sort is selectable', { timeout: 120_000 }, async () => {
    const { store, page, sessions } = await setup()
    const openNow = store.listAnnotations().filter(open)
    // Newest open first: the first page is the 100 newest open annotations, in that order.
    await eventually(() => page.locator('article.card').count()).toBe(100)
    expect(await cardIds(page)).toEqual(grouped(newestFirst(openNow).slice(0, 100)))
    // Totals come from the server, not from what is loaded.
    await eventually(() => page.locator('.filter[data-filter="open"] .n').textContent()).toBe(String(openNow.length))
    expect(await page.locator('.filter[data-filter="all"] .n').textContent()).toBe('500')
    expect(await page.locator('.filter[data-filter="resolved"] .n').textContent()).toBe('100')
    for (const s of sessions) {
      const n = openNow.filter((a) => a.sessionId === s).length
      expect(await page.locator(`section.session[data-session="${s}"] .group-total`).textContent()).toBe(`${n} annotations`)
    }
    expect(await page.getByRole('button', { name: `Load more (${openNow.length - 100} more)` }).count()).toBe(1)

    // A new annotation appears at once, on top, marked New; totals follow.
    const fresh = await store.addAnnotation({ sessionId: sessions[1]!, comment: 'Brand new: the cart badge is stale' })
    await eventually(() => cardIds(page).then((ids) => ids[0])).toBe(fresh.id)
    expect(await card(page, fresh.id).locator('.new-tag').textContent()).toBe('New')
    await eventually(() => page.locator('.filter[data-filter="open"] .n').textContent()).toBe(String(openNow.length + 1))
    const cartOpen = openNow.filter((a) => a.sessionId === sessions[1]).length + 1
    await eventually(() => page.locator(`section.session[data-session="${sessions[1]}"] .group-total`).textContent()).toBe(`${cartOpen} annotations`)
    // Looking at it clears the mark.
    await card(page, fresh.id).locator('.comment').click()
    await eventually(() => card(page, fresh.id).locator('.new-tag').count()).toBe(0)

    // Oldest first, chosen in the toolbar, kept in the URL.
    await page.getByLabel('Sort').selectOption('oldest')
    await eventually(() => cardIds(page).then((ids) => ids[0])).toBe(openNow[0]!.id)
    expect(new URL(page.url()).searchParams.get('sort')).toBe('oldest')
    await shot(page, 'inbox-500.png')
  })

  it('searches comments and replies and filters by page, intent, severity, status and reply author', { timeout: 120_000 }, async () => {
    const { store, page, sessions } = await setup()
    const all = store.listAnnotations()
    const search = page.getByLabel('Search comments and replies')
    await search.fill('checkout')
    await search.press('Enter')
    const checkout = all.filter((a) => open(a) && a.comment.toLowerCase().includes('checkout'))
    await eventually(() => page.locator('article.card').count()).toBe(checkout.length)
    expect(new URL(page.url()).searchParams.get('q')).toBe('checkout')
    // Replies are searched too (the agent's "PAYMENT" questions), across every status.
    await search.fill('payment')
    await search.press('Enter')
    await page.locator('.filter[data-filter="all"]').click()
    const payment = all.filter((a) => a.replies.some((r) => r.message.includes('PAYMENT')))
    await eventually(() => page.locator('article.card').count()).toBe(payment.length)
    expect(await page.locator('.filter[data-filter="all"] .n').textContent()).toBe(String(payment.length))
    // Esc in the search box clears it.
    await search.press('Escape')
    await eventually(() => page.locator('.filter[data-filter="all"] .n').textContent()).toBe('500')

    // Page + intent + severity + status, together.
    await page.getByLabel('Page').selectOption(sessions[2]!)
    await page.getByLabel('Intent').selectOption('fix')
    await page.getByLabel('Severity').selectOption('blocking')
    await page.locator('.filter[data-filter="resolved"]').click()
    const want = all.filter((a) => a.sessionId === sessions[2] && a.intent === 'fix' && a.severity === 'blocking' && a.status === 'resolved')
    expect(want.length).toBeGreaterThan(0)
    await eventually(() => cardIds(page).then((ids) => [...ids].sort())).toEqual(want.map((a) => a.id).sort())
    expect(await page.locator('.filter[data-filter="resolved"] .n').textContent()).toBe(String(want.length))

    // Reply author: annotations the agent replied to.
    await page.getByLabel('Page').selectOption('')
    await page.getByLabel('Intent').selectOption('')
    await page.getByLabel('Severity').selectOption('')
    await page.locator('.filter[data-filter="all"]').click()
    await page.getByLabel('Replies by').selectOption('agent')
    await eventually(() => page.locator('article.card').count()).toBe(all.filter((a) => a.replies.some((r) => r.author === 'agent')).length)
    // The view is in the URL: a reload keeps it.
    await page.reload()
    await eventually(() => page.locator('article.card').count()).toBe(all.filter((a) => a.replies.some((r) => r.author === 'agent')).length)
    expect(await page.getByLabel('Replies by').inputValue()).toBe('agent')
  })

  it('acts on a selection: resolve, copy as Markdown, archive, delete — one event each, focus stays in place', { timeout: 120_000 }, async () => {
    const { store, page } = await setup()
    await eventually(() => page.locator('article.card').count()).toBe(100)
    const ids = (await cardIds(page)).slice(0, 3) as string[]
    for (const id of ids) await card(page, id).locator('input.pick').check()
    await eventually(() => page.locator('.bulk-count').textContent()).toBe('3 selected')

    // Copy the selection as Markdown: oldest first, with the element and the page.
    await page.locator('[data-bulk="copy"]').click()
    const markdown = await page.evaluate(() => navigator.clipboard.readText())
    const comments = [...ids].reverse().map((id) => store.getAnnotation(id).comment)
    expect([...markdown.matchAll(/^### \d+\. (.*)$/gm)].map((m) => m[1])).toEqual(comments)
    expect(markdown).toContain('list item "Row')

    // Resolve: three events, the cards stay (dimmed: they left the Open view), focus stays on Resolve.
    const events: string[] = []
    const sub = store.changes$.subscribe((e) => events.push(e.type))
    cleanups.push(() => sub.unsubscribe())
    await page.locator('[data-bulk="resolve"]').click()
    await eventually(() => ids.map((id) => store.getAnnotation(id).status)).toEqual(['resolved', 'resolved', 'resolved'])
    expect(events.filter((t) => t === 'annotation.status_changed')).toHaveLength(3)
    await eventually(() => card(page, ids[0]!).locator('.chip').textContent()).toBe('Resolved')
    expect(await card(page, ids[0]!).getAttribute('class')).toContain('elsewhere')
    expect((await focused(page)).action).toBe('resolve')

    // Archive them (finished now): they leave the store and the list.
    await page.locator('[data-bulk="archive"]').click()
    await eventually(() => card(page, ids[0]!).count()).toBe(0)
    expect(store.listAnnotations().some((a) => ids.includes(a.id))).toBe(false)
    expect(events.filter((t) => t === 'annotation.archived')).toHaveLength(3)
    await eventually(() => page.locator('#bulk').isVisible()).toBe(false)

    // Delete two more (asks twice); focus moves to the card after them.
    const next = (await cardIds(page)) as string[]
    await card(page, next[0]!).locator('input.pick').check()
    await card(page, next[1]!).locator('input.pick').check()
    await page.locator('[data-bulk="delete"]').click()
    expect(store.listAnnotations().some((a) => a.id === next[0])).toBe(true)
    await page.locator('[data-bulk="delete"]').click()
    await eventually(() => card(page, next[0]!).count()).toBe(0)
    expect(events.filter((t) => t === 'annotation.deleted')).toHaveLength(2)
    await eventually(() => focused(page)).toEqual({ action: 'select', card: next[2] })
  })

  it('reply boxes: Ctrl+Enter sends, Esc closes, pasted images go with the reply; long comments collapse', { timeout: 120_000 }, async () => {
    const { store, page, all } = await setup()
    const target = (await cardIds(page))[1] as string
    const c = card(page, target)
    await c.getByRole('button', { name: /Reply|Answer/ }).click()
    const box = c.locator('textarea')
    await box.fill('draft')
    await box.press('Escape')
    await eventually(() => c.locator('form.reply-form').isVisible()).toBe(false)
    expect((await focused(page)).action).toBe('reply')

    await c.getByRole('button', { name: /Reply|Answer/ }).click()
    expect(await box.inputValue()).toBe('draft')
    // Paste a real PNG (drawn on a canvas) into the box.
    await box.evaluate(async (el) => {
      const canvas = document.createElement('canvas')
      canvas.width = 8
      canvas.height = 6
      canvas.getContext('2d')!.fillRect(0, 0, 8, 6)
      const blob = await new Promise<Blob>((resolve) => canvas.toBlob((b) => resolve(b!), 'image/png'))
      const data = new DataTransfer()
      data.items.add(new File([blob], 'shot.png', { type: 'image/png' }))
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    })
    await eventually(() => c.locator('.image-tray img').count()).toBe(1)
    await box.fill('See the picture')
    await box.press('Control+Enter')
    await eventually(() => store.getAnnotation(target).replies.at(-1)?.message).toBe('See the picture')
    const reply = store.getAnnotation(target).replies.at(-1)!
    expect(reply.author).toBe('human')
    expect(reply.attachments).toEqual([expect.objectContaining({ kind: 'image', mime: 'image/png', width: 8, height: 6 })])
    await eventually(() => c.locator('.reply .attachments img').count()).toBe(1)
    await eventually(() => c.locator('form.reply-form').isVisible()).toBe(false)

    // The agent's question box at the top: Esc leaves it (the text stays), Ctrl+Enter answers.
    const asked = all[10]!
    await store.reply(asked.id, { author: 'agent', kind: 'question', message: 'Which footer, the sticky one?' })
    const answer = page.locator('#questions textarea')
    await eventually(() => answer.count()).toBe(1)
    await answer.fill('The sticky one.')
    await answer.press('Escape')
    expect(await answer.evaluate((el) => el === document.activeElement)).toBe(false)
    expect(await answer.inputValue()).toBe('The sticky one.')
    await answer.press('Control+Enter')
    await eventually(() => store.getAnnotation(asked.id).replies.at(-1)).toMatchObject({ author: 'human', message: 'The sticky one.' })
    await eventually(() => page.locator('#questions').isVisible()).toBe(false)

    // The long comment starts collapsed behind "Show more".
    const long = all[497]!
    const lc = card(page, long.id)
    await eventually(() => lc.locator('.comment').getAttribute('class')).toContain('collapsed')
    const collapsedHeight = (await lc.locator('.comment').boundingBox())!.height
    await lc.getByRole('button', { name: /Show more/ }).click()
    await eventually(() => lc.locator('.comment').getAttribute('class')).not.toContain('collapsed')
    expect((await lc.locator('.comment').boundingBox())!.height).toBeGreaterThan(collapsedHeight * 2)
  })

  it('fits a 375 px phone: the header, the toolbar and the selection bar stay on screen; offline says so once', { timeout: 120_000 }, async () => {
    const { page, stop } = await setup({ width: 375, height: 667 })
    const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, header: document.querySelector('.top-inner')!.scrollWidth }))
    expect(widths.doc).toBeLessThanOrEqual(375)
    expect(widths.header).toBeLessThanOrEqual(375)
    for (const sel of ['#agent', '#live', '.title', '.search', '[aria-label="Sort"]', '[aria-label="Replies by"]']) {
      const box = (await page.locator(sel).boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(375)
    }
    const first = (await cardIds(page))[0] as string
    await card(page, first).locator('input.pick').check()
    await eventually(() => page.locator('#bulk').isVisible()).toBe(true)
    const bar = (await page.locator('#bulk').boundingBox())!
    expect(bar.x + bar.width).toBeLessThanOrEqual(375)
    await shot(page, 'inbox-375.png')

    // With the server gone, "Server unreachable" shows once.
    await stop()
    await eventually(() => page.locator('#live').getAttribute('data-state'), 30_000).toBe('offline')
    const text = await page.locator('body').innerText()
    expect(text.match(/Server unreachable/g)).toHaveLength(1)
    expect(await page.evaluate(() => document.querySelector('.top-inner')!.scrollWidth)).toBeLessThanOrEqual(375)
    const live = (await page.locator('#live').boundingBox())!
    expect(live.x + live.width).toBeLessThanOrEqual(375)
    await shot(page, 'inbox-375-offline.png')
  })
})
