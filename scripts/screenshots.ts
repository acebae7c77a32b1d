/**
 * `npm run screenshots`: the pictures of the README and the guides (docs/screenshots/), made the way a person would see them.
 *
 * Starts a Marginalia server on an in-memory store with a few annotations in every state, serves a
 * small demo shop page (scripts/demo-page.html) on another port with the overlay's one script tag,
 * connects an agent over HTTP MCP that is waiting in `watch_changes` (so the overlay says "Agent
 * listening"), and drives Debian's Chromium with playwright-core:
 *
 *   docs/screenshots/overlay.png — the demo page, pins on the annotated elements, a thread open
 *   docs/screenshots/inbox.png   — the inbox at /?status=all&sort=oldest: the resolved card shows its before | after
 *   docs/screenshots/phone.png   — the demo page on a 375×667 touch screen, words selected by touch, the box open
 *
 * Needs /usr/bin/chromium (apt-get install chromium) or MARGINALIA_CHROMIUM; never downloads a browser.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { chromium } from 'playwright-core'
import { createMemoryStore, startHttpServer } from '../src/index.js'
import { storeImage } from '../src/store/blobs/index.js'
import type { Attachment } from '../src/store/model.js'
import { CHROMIUM_ARGS, chromiumPath } from '../test/helpers/chromium.js'

const root = path.resolve(import.meta.dirname, '..')
const outDir = path.join(root, 'docs', 'screenshots')
const executablePath = chromiumPath()
if (!executablePath) {
  process.stderr.write('screenshots: no Chromium at /usr/bin/chromium (apt-get install chromium, or set MARGINALIA_CHROMIUM)\n')
  process.exit(1)
}

// A clock we can set back while seeding, so the pictures show a believable history.
let offsetMs = 0
const clock = () => new Date(Date.now() - offsetMs)
const minutesAgo = (m: number) => (offsetMs = m * 60_000)

const store = createMemoryStore({ clock })
const http = await startHttpServer(store, { port: 0, log: () => {} })

const demo = readFileSync(path.join(root, 'scripts', 'demo-page.html'), 'utf8').replace('<!--OVERLAY-->', `<script src="${http.url}/overlay.js" defer></script>`)
const page$: Server = createServer((req, res) => {
  if (req.url?.startsWith('/checkout')) {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end(demo)
  } else {
    res.writeHead(404).end()
  }
})
await new Promise<void>((resolve) => page$.listen(0, '127.0.0.1', resolve))
const pageOrigin = `http://127.0.0.1:${(page$.address() as AddressInfo).port}`
const pageUrl = `${pageOrigin}/checkout`

/** The demo page's logo as it was (plain text) and once linked (underlined, with its focus ring), as attachments. */
async function logoPictures(): Promise<[Attachment, Attachment]> {
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS })
  try {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
    await tab.setContent(readFileSync(path.join(root, 'scripts', 'demo-page.html'), 'utf8').replace('<!--OVERLAY-->', ''))
    const shot = async (): Promise<Attachment> => {
      const box = (await tab.locator('header > div.logo').boundingBox())!
      const png = await tab.screenshot({ clip: { x: Math.max(0, box.x - 16), y: Math.max(0, box.y - 16), width: box.width + 32, height: box.height + 32 } })
      const stored = await storeImage(store.blobs, png)
      return { id: `att_${stored.sha256.slice(0, 12)}`, kind: 'screenshot', mime: stored.mime, bytes: stored.bytes, width: stored.width, height: stored.height, sha256: stored.sha256 }
    }
    const before = await shot()
    await tab.evaluate(`(() => {
      const logo = document.querySelector('header > div.logo')
      logo.innerHTML = '<a href="/" style="color: inherit; text-decoration: underline; text-underline-offset: 3px; outline: 2px solid #4f46e5; outline-offset: 3px; border-radius: 2px">Fern &amp; Field</a>'
    })()`)
    return [before, await shot()]
  } finally {
    await browser.close()
  }
}

// ---- history ----
const viewport = { width: 1280, height: 800 }
minutesAgo(48)
const session = await store.createSession({ url: pageUrl, name: 'Checkout · Fern & Field' })
/** An element as the overlay describes it; `at`: where in it the person clicked (fractions), where its pin goes. */
const on = (selector: string, tag: string, text: string, rect: { x: number; y: number; width: number; height: number }, at?: { x: number; y: number }) => ({ selector, tag, text, rect, path: `html > body > main > ${selector}`, ...(at ? { at } : {}) })

// The logo before and after the agent's fix, pictured as the overlay pictures an element: the
// "before" goes with the annotation, the "after" a browser took when the agent resolved it.
const [beforeShot, afterShot] = await logoPictures()
const logo = await store.addAnnotation({
  sessionId: session.id,
  comment: 'The logo should link back to the home page.',
  url: pageUrl,
  element: on('header > div.logo', 'div', 'Fern & Field', { x: 48, y: 20, width: 130, height: 24 }),
  intent: 'change',
  severity: 'suggestion',
  viewport,
  attachments: [beforeShot],
})
minutesAgo(44)
await store.acknowledge(logo.id, { message: 'Taking this one.' })
minutesAgo(41)
const resolvedLogo = await store.resolve(logo.id, { summary: 'Wrapped the logo in <a href="/"> in Header.tsx and kept the focus ring visible.' }, 'agent', { after: true })
await store.recordCapture(logo.id, { requestId: 'after', attachment: { ...afterShot, kind: 'after' }, url: pageUrl, anchor: 'found', capturedAt: clock().toISOString(), attachTo: resolvedLogo.replies.at(-1)!.id })

minutesAgo(31)
const express = await store.addAnnotation({
  sessionId: session.id,
  comment: 'Express should show the delivery date, not just "1–2 days".',
  url: pageUrl,
  element: on('div.shipping > div.option:nth-of-type(2)', 'div', 'Express 1–2 days · $12.00', { x: 470, y: 640, width: 300, height: 62 }),
  intent: 'change',
  severity: 'important',
  viewport,
})
minutesAgo(27)
await store.acknowledge(express.id, { message: 'On it: the carrier API returns an estimated date, I will show "Arrives Thu, Jun 12".' })

minutesAgo(19)
const tax = await store.addAnnotation({
  sessionId: session.id,
  comment: 'Tax is shown before the address is complete — it jumps when the ZIP changes.',
  url: pageUrl,
  // Clicked in the row's empty middle: the pin does not hide the amount.
  element: on('div.totals > div:nth-of-type(3)', 'div', 'Tax $5.60', { x: 860, y: 420, width: 310, height: 22 }, { x: 0.4, y: 0.5 }),
  intent: 'fix',
  severity: 'important',
  viewport,
})
minutesAgo(16)
await store.acknowledge(tax.id, { message: 'Looking at it: tax is computed from the IP location until a ZIP is typed.' })
minutesAgo(5)
await store.reply(tax.id, { author: 'agent', kind: 'question', message: 'Should I hide tax until the ZIP is valid, or keep an estimate labelled "est."?' })

minutesAgo(3)
await store.addAnnotation({
  sessionId: session.id,
  comment: 'The Place order button has too little contrast on hover and no loading state — people click it twice.',
  url: pageUrl,
  element: on('button.place-order', 'button', 'Place order', { x: 860, y: 520, width: 310, height: 46 }),
  selectedText: 'Place order',
  intent: 'fix',
  severity: 'blocking',
  viewport,
})

// A second page, so the inbox shows more than one session.
minutesAgo(95)
const plants = await store.createSession({ url: `${pageOrigin}/plants`, name: 'Plants · Fern & Field' })
const filter = await store.addAnnotation({
  sessionId: plants.id,
  comment: 'The "Pet safe" filter is hidden behind "More filters"; it is the one people use most.',
  url: `${pageOrigin}/plants`,
  element: on('aside.filters > details', 'details', 'More filters', { x: 40, y: 300, width: 220, height: 40 }),
  intent: 'change',
  severity: 'suggestion',
})
minutesAgo(90)
await store.dismiss(filter.id, { reason: 'Already moved to the top in #128, which is on main; this page was a stale build.' })
offsetMs = 0

// ---- an agent, waiting ----
const agent = new Client({ name: 'screenshots-agent', version: '1.0.0' })
await agent.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
const waiting = agent.callTool({ name: 'watch_changes', arguments: { sinceRev: store.rev, timeoutMs: 120_000 } }, undefined, { timeout: 130_000 }).catch(() => undefined)

const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS })
try {
  mkdirSync(outDir, { recursive: true })
  const context = await browser.newContext({ viewport, deviceScaleFactor: 2, colorScheme: 'light' })
  const page = await context.newPage()
  await page.goto(pageUrl)
  await page.locator('marginalia-overlay .agent[data-state="listening"]').waitFor({ timeout: 15_000 })
  // Three open annotations have pins (the resolved one is hidden, as by default).
  await page.locator('marginalia-overlay .pin').nth(2).waitFor({ timeout: 10_000 })
  // Open the thread with the agent's question.
  await page.locator('marginalia-overlay .pin[data-question]').click()
  await page.locator('marginalia-overlay .thread .reply[data-open]').waitFor()
  await page.locator('marginalia-overlay .thread textarea').fill('Keep the estimate, labelled "est.", until the ZIP is valid.')
  await page.mouse.move(1, 1)
  await page.waitForTimeout(400) // let the panel settle
  await page.screenshot({ path: path.join(outDir, 'overlay.png') })

  const inbox = await context.newPage()
  await inbox.setViewportSize({ width: 1280, height: 1440 })
  await inbox.goto(`${http.url}/?status=all&sort=oldest`)
  await inbox.locator('#live[data-state="live"]').waitFor({ timeout: 10_000 })
  await inbox.locator('.question').first().waitFor()
  await inbox.locator('.filter .n').first().filter({ hasText: /\d/ }).waitFor()
  await inbox.locator('.before-after figure[data-side="after"] img').waitFor()
  // Two cards selected: the selection bar with the bulk actions and Copy as Markdown.
  await inbox.locator('article.card input.pick').nth(0).check()
  await inbox.locator('article.card input.pick').nth(1).check()
  await inbox.mouse.move(1, 1)
  await inbox.waitForTimeout(300)
  await inbox.screenshot({ path: path.join(outDir, 'inbox.png') })
  await context.close()

  // On a phone: words selected by touch in annotate mode (a long press, the selection made while
  // the finger is down as the phone makes it), the box below them.
  const phone = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2, colorScheme: 'light' })
  const mobile = await phone.newPage()
  await mobile.goto(pageUrl)
  await mobile.locator('marginalia-overlay .agent[data-state="listening"]').waitFor({ timeout: 15_000 })
  await mobile.locator('marginalia-overlay .annotate').tap()
  // In the page (this script has no DOM types): the word's centre; selected once the finger is
  // down (the window sees the touch before the overlay does).
  const words = await mobile.evaluate<{ x: number; y: number }>(`(() => {
    const text = [...document.querySelector('.steps').childNodes].find((n) => n.nodeType === 3 && n.textContent.includes('Payment'))
    const at = text.data.indexOf('Payment')
    const range = document.createRange()
    range.setStart(text, at)
    range.setEnd(text, at + 'Payment'.length)
    window.addEventListener('touchstart', () => {
      getSelection().removeAllRanges()
      getSelection().addRange(range)
    }, { capture: true, once: true })
    const r = range.getBoundingClientRect()
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 }
  })()`)
  const cdp = await phone.newCDPSession(mobile)
  const press = cdp.send('Input.synthesizeTapGesture', { ...words, duration: 800, tapCount: 1, gestureSourceType: 'touch' })
  await press
  await mobile.locator('marginalia-overlay .composer blockquote.selected').waitFor({ timeout: 10_000 })
  await mobile.locator('marginalia-overlay .composer textarea').fill('Make the steps tappable: I want to go back to Shipping.')
  await mobile.locator('marginalia-overlay .composer textarea').blur()
  await mobile.waitForTimeout(300) // let the toast settle
  await mobile.screenshot({ path: path.join(outDir, 'phone.png') })
  await phone.close()
  process.stdout.write(`screenshots: wrote ${['overlay.png', 'inbox.png', 'phone.png'].map((f) => path.relative(root, path.join(outDir, f))).join(', ')}\n`)
} finally {
  await browser.close()
  await agent.close().catch(() => {})
  await waiting
  await http.close()
  await new Promise<void>((resolve) => page$.close(() => resolve()))
  await store.close()
}
