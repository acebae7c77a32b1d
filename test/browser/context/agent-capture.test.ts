/**
 * The agent looks at the person's page: `capture` through a real MCP client, answered by the
 * overlay in real Chromium. The picture's pixels follow the page as it is now (a hot reload turns
 * the button from red to green); with no browser on the page the call fails clearly, in time.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Store } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { eventually } from '../../helpers/eventually.js'
import { connect, errorOf, structured } from '../../helpers/mcp.js'
import { decodePng } from '../../helpers/png.js'
import { request } from '../../helpers/http.js'
import { createToolRegistry } from '../../../src/index.js'
import type { McpCallContext } from '../../../src/tools/define.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const RED: [number, number, number] = [220, 0, 0]
const GREEN: [number, number, number] = [0, 160, 60]

function fixture(server: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Buy</title>
<style>body { margin: 0; padding: 40px; background: #fff; } #buy { width: 200px; height: 100px; border: 0; background: rgb(220, 0, 0); }
#note { margin-top: 40px; width: 300px; height: 60px; background: rgb(40, 40, 200); }</style></head>
<body><button id="buy" type="button" aria-label="Buy"></button><div id="note">Shipping</div>
<p class="total" data-marginalia-source="src/Cart.tsx:42:7">Total $24</p>
<script src="${server}/overlay.js" data-screenshot-budget="10000"></script></body></html>`
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

async function setup(): Promise<{ store: Store; page: Page; url: string; server: string; mcp: Awaited<ReturnType<typeof connect>> }> {
  const { store, http } = await startMarginalia(cleanups)
  const pages = await servePages({ '/buy': () => fixture(http.url) }, cleanups)
  const { page } = await chromium.newPage({ viewport: { width: 1000, height: 700 } })
  await page.goto(`${pages.origin}/buy`)
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 15_000 })
  const mcp = await connect(store)
  cleanups.push(() => mcp.close())
  return { store, page, url: `${pages.origin}/buy`, server: http.url, mcp }
}

/** The person annotates the red button through the overlay (with its screenshot: the "before"). */
async function annotateButton(page: Page, store: Store): Promise<string> {
  await ui(page, '.annotate').click()
  await page.locator('#buy').click()
  await ui(page, '.composer textarea').fill('Should be green')
  await ui(page, '.composer button[type="submit"]').click()
  await eventually(() => store.getAllPending().length, 10_000).toBe(1)
  return store.getAllPending()[0]!.id
}

/** The colour inside the element in a picture (below its middle: clear of the outline). */
function colourOf(png: Buffer): [number, number, number] {
  const img = decodePng(png)
  const [r, g, b] = img.pixel(Math.floor(img.width / 2), Math.floor(img.height / 2) + Math.floor(img.height / 6))
  return [r, g, b]
}

function imageOf(result: CallToolResult): Buffer {
  const image = result.content.find((c) => c.type === 'image')
  if (!image || image.type !== 'image') throw new Error(`no image in ${JSON.stringify(result.content).slice(0, 300)}`)
  expect(image.mimeType).toBe('image/png')
  return Buffer.from(image.data, 'base64')
}

describe.skipIf(!enabled)('capture: the agent looks at the person\'s page', () => {
  it('returns the element as it is now: red, then green after the page changed', { timeout: 60_000 }, async () => {
    const { store, page, url, server, mcp } = await setup()
    const id = await annotateButton(page, store)

    const first = await mcp.call('capture', { id })
    expect(first.isError).toBeFalsy()
    expect(colourOf(imageOf(first))).toEqual(RED)
    const out = structured<{ capturedAt: string; url: string; anchor: string; annotationId: string }>(first)
    expect(out).toMatchObject({ annotationId: id, url, anchor: 'found' })
    expect(Date.parse(out.capturedAt)).toBeGreaterThan(Date.now() - 60_000)
    // The person sees that the agent looked.
    await eventually(() => ui(page, '.toast').first().textContent(), 10_000).toContain('The agent looked at #1')

    // A hot reload lands: the button is green now.
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('#buy')!.style.background = 'rgb(0, 160, 60)'
    })
    const second = await mcp.call('capture', { id })
    expect(colourOf(imageOf(second))).toEqual(GREEN)

    // Resolved while the page is open: the green "after" joins the summary; the red "before" stays.
    const resolved = await mcp.call('resolve', { id, summary: 'Made it green' })
    expect(resolved.isError).toBeFalsy()
    const afterOf = () => store.getAnnotation(id).replies.at(-1)?.attachments?.find((x) => x.kind === 'after')
    await eventually(afterOf, 10_000).toBeDefined()
    const withAfter = afterOf()
    expect(colourOf(Buffer.from((await store.blobs.get(withAfter!.sha256))!.bytes))).toEqual(GREEN)
    const a = store.getAnnotation(id)
    expect(a.replies.at(-1)!.message).toBe('Made it green')
    const before = a.attachments!.find((x) => x.kind === 'screenshot')!
    expect(colourOf(Buffer.from((await store.blobs.get(before.sha256))!.bytes))).toEqual(RED)

    // get_annotation says which picture is which.
    const full = await mcp.call('get_annotation', { id })
    const labels = full.content.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text)
    expect(labels).toEqual(expect.arrayContaining(['before: the element when it was annotated', 'after: the element when it was resolved']))
    const order = full.content.map((c) => (c.type === 'text' ? (c as { text: string }).text.split(':')[0] : c.type))
    expect(order.slice(1)).toEqual(['before', 'image', 'after', 'image'])

    // The thread shows them side by side.
    await page.evaluate((annotationId) => window.Marginalia!.open(annotationId), id)
    await ui(page, '.before-after figure').nth(1).waitFor({ timeout: 10_000 })
    expect(await ui(page, '.before-after figcaption').allTextContents()).toEqual(['Before', 'After'])
    // And so does the inbox.
    const inbox = await page.context().newPage()
    await inbox.goto(`${server}/?status=all`)
    const card = inbox.locator(`article.card[data-id="${id}"]`)
    await card.locator('.before-after figure').nth(1).waitFor({ timeout: 10_000 })
    expect(await card.locator('.before-after figcaption').allTextContents()).toEqual(['Before', 'After'])
  })

  it('resolve with after: false adds no picture', { timeout: 60_000 }, async () => {
    const { store, page, mcp } = await setup()
    const id = await annotateButton(page, store)
    await mcp.call('resolve', { id, summary: 'Done', after: false })
    // A capture answered afterwards shows the overlay was there and would have answered.
    expect((await mcp.call('capture', { id })).isError).toBeFalsy()
    expect(store.getAnnotation(id).replies.at(-1)!.attachments).toBeUndefined()
  })

  it("an agent's annotate of another element is pinned on it in the open page within a second, anchored like a person's", { timeout: 60_000 }, async () => {
    const { store, page, url, server, mcp } = await setup()
    const filed = await mcp.call('annotate', { url, selector: '#note', comment: 'Shipping text is cut off', intent: 'fix', severity: 'important' })
    expect(filed.isError, JSON.stringify(filed.content)).toBeFalsy()
    const { id } = structured<{ id: string }>(filed)
    const started = Date.now()
    const pin = ui(page, `.pin[data-id="${id}"][data-agent]`)
    await pin.waitFor({ timeout: 5_000 })
    await eventually(async () => {
      const box = await pin.boundingBox()
      const note = await page.locator('#note').boundingBox()
      return box !== null && note !== null && Math.abs(box.y - note.y) < 40 && box.x >= note.x - 40 && box.x <= note.x + note.width + 40
    }, 5_000).toBe(true)
    const pinnedMs = Date.now() - started
    console.error(`annotate → pin on the element: ${pinnedMs} ms`)
    expect(pinnedMs).toBeLessThan(1_000)
    // The browser anchored it as a person's: fingerprint, label, and a screenshot of the element.
    await eventually(() => store.getAnnotation(id).element?.fingerprint, 10_000).toBeDefined()
    const a = store.getAnnotation(id)
    expect(a).toMatchObject({ author: 'agent', intent: 'fix', severity: 'important', element: { tag: 'div' } })
    expect(colourOf(Buffer.from((await store.blobs.get(a.attachments!.find((x) => x.kind === 'screenshot')!.sha256))!.bytes))).toEqual([40, 40, 200])

    // The agent that filed it never gets it back from watch_annotations; another agent does, unless it asks for people's only.
    expect(structured<{ status: string }>(await mcp.call('watch_annotations', { timeoutMs: 300 })).status).toBe('timeout')
    // Another agent (another MCP session) gets it, unless it asks for people's annotations only.
    const registry = createToolRegistry(store)
    const otherAgent = { mcp: { sessionId: 'another-agent', notify: async () => {}, request: () => Promise.reject(new Error('no client')) } as unknown as McpCallContext }
    const seen = await registry.call('watch_annotations', { timeoutMs: 300 }, otherAgent)
    expect(seen.ok && (seen.result as { annotations: { id: string }[] }).annotations.map((x) => x.id)).toEqual([id])
    const people = await registry.call('watch_annotations', { timeoutMs: 300, authors: 'people' }, otherAgent)
    expect(people.ok && people.result.status).toBe('timeout')
    // The person answers and resolves it like any annotation.
    expect((await request(`${server}/api/annotations/${id}/replies`, { method: 'POST', body: { message: 'Will look' } })).status).toBe(201)
    expect((await request(`${server}/api/annotations/bulk`, { method: 'POST', body: { action: 'resolve', ids: [id] } })).json).toMatchObject({ done: [id] })
  })

  it('annotate by source location: the element the build plugin marked with that file and line gets the pin', { timeout: 60_000 }, async () => {
    const { store, page, url, mcp } = await setup()
    const filed = await mcp.call('annotate', { url, source: { file: 'src/Cart.tsx', line: 42 }, comment: 'Total should include tax' })
    const { id } = structured<{ id: string }>(filed)
    await ui(page, `.pin[data-id="${id}"][data-agent]`).waitFor({ timeout: 5_000 })
    await eventually(() => store.getAnnotation(id).element?.fingerprint, 10_000).toBeDefined()
    expect(store.getAnnotation(id)).toMatchObject({ source: { file: 'src/Cart.tsx', line: 42 }, element: { tag: 'p', text: 'Total $24' } })
  })

  it('ask with point: the overlay turns to annotate mode with the question; a click answers with the element', { timeout: 60_000 }, async () => {
    const { store, page, mcp } = await setup()
    const id = await annotateButton(page, store)
    await ui(page, '.composer').waitFor({ state: 'hidden' })
    const asking = mcp.call('ask', { id, question: 'Which element do you mean by "shipping"?', point: true, timeoutMs: 30_000 })
    await ui(page, '.annotate[aria-pressed="true"]').waitFor({ timeout: 10_000 })
    await eventually(() => ui(page, '.toast').first().textContent(), 10_000).toContain('Which element do you mean by "shipping"?')
    await page.locator('#note').click()
    await ui(page, '.composer textarea').fill('This box')
    await ui(page, '.composer button[type="submit"]').click()
    const result = await asking
    const out = structured<{ status: string; answer: { message: string; element?: { selector: string; label?: string; fingerprint?: object }; attachments?: { kind: string; sha256: string }[] } }>(result)
    expect(out.status).toBe('answered')
    expect(out.answer.message).toBe('This box')
    expect(out.answer.element).toMatchObject({ selector: '#note' })
    expect(out.answer.element!.label).toContain('Shipping')
    const shot = out.answer.attachments!.find((x) => x.kind === 'screenshot')!
    expect(colourOf(Buffer.from((await store.blobs.get(shot.sha256))!.bytes))).toEqual([40, 40, 200])
    // await_reply returns the same answer.
    const again = structured<{ answer: { element?: { selector: string } } }>(await mcp.call('await_reply', { id, timeoutMs: 1_000 }))
    expect(again.answer.element!.selector).toBe('#note')
    // No new annotation was made: the pick answered the question.
    expect(store.getSession(store.getAnnotation(id).sessionId).annotations).toHaveLength(1)
  })

  it('an element that is gone: the picture shows the page, anchor "missing"', { timeout: 60_000 }, async () => {
    const { store, page, mcp } = await setup()
    const id = await annotateButton(page, store)
    await page.evaluate(() => document.querySelector('#buy')!.remove())
    const result = await mcp.call('capture', { id })
    expect(structured<{ anchor: string }>(result).anchor).toBe('missing')
    imageOf(result)
  })

  it('no browser shows the page: a clear error naming the page, within the timeout', { timeout: 60_000 }, async () => {
    const { store, page, url, mcp } = await setup()
    const id = await annotateButton(page, store)
    await page.close()
    const started = Date.now()
    const result = await mcp.call('capture', { id, timeoutMs: 1_500 })
    const elapsed = Date.now() - started
    const error = errorOf(result)
    expect(error.code).toBe('NO_BROWSER')
    expect(error.message).toContain(url)
    expect(error.message).toMatch(/open/)
    expect(elapsed).toBeGreaterThanOrEqual(1_400)
    expect(elapsed).toBeLessThan(5_000)
  })
})
