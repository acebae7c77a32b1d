/**
 * Shared set-up for the anchoring tests: a Marginalia server on a memory store, fixture
 * pages on their own loopback origin, a Chromium context, and small helpers to read the overlay's
 * pins and marks from inside its shadow root.
 */
import path from 'node:path'
import { build } from 'esbuild'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { type HttpServer, type Store } from '../../../src/index.js'
import { servePages, type PageServer, startMarginalia } from '../../helpers/page.js'
import { type Cleanups } from '../../helpers/cleanup.js'

export interface Setup {
  store: Store
  http: HttpServer
  pages: PageServer
  context: BrowserContext
  page: Page
}

/** Serve `pages` (pathname → HTML, where `{{overlay}}` becomes the overlay's script tag) and open `open`. */
export async function setup(browser: Browser, cleanups: Cleanups, pages: Record<string, string>, open: string, viewport = { width: 1024, height: 700 }): Promise<Setup> {
  const { store, http } = await startMarginalia(cleanups)
  const tag = `<script src="${http.url}/overlay.js" defer></script>`
  const served = await servePages(Object.fromEntries(Object.entries(pages).map(([k, v]) => [k, v.replace('{{overlay}}', tag)])), cleanups)
  const context = await browser.newContext({ viewport })
  cleanups.push(() => context.close())
  const page = await context.newPage()
  await openPage(page, `${served.origin}${open}`)
  return { store, http, pages: served, context, page }
}

/** Load the page and wait until the overlay has talked to the server. */
export async function openPage(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 20_000 })
}

export const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/** Annotate mode on (idempotent). */
/** Annotate mode on, as the person sees it (the button pressed): its chunk may take a round trip to come. */
export async function annotateMode(page: Page): Promise<void> {
  if ((await ui(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await ui(page, '.annotate').click()
  await expect.poll(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
}

type BoxLike = { x: number; y: number; width: number; height: number } | null

/** A real mouse click at a point of a box (fractions of it): Playwright's own click refuses covered elements. */
export async function clickAt(page: Page, box: BoxLike, fx = 0.5, fy = 0.5, modifiers: ('Shift' | 'Alt')[] = []): Promise<void> {
  if (!box) throw new Error('no box to click')
  const x = box.x + box.width * fx
  const y = box.y + box.height * fy
  await page.mouse.move(x, y)
  for (const m of modifiers) await page.keyboard.down(m)
  await page.mouse.click(x, y)
  for (const m of modifiers) await page.keyboard.up(m)
}

/** Write `comment` in the open composer and send it. */
export async function send(page: Page, comment: string): Promise<void> {
  await ui(page, '.composer textarea').fill(comment)
  await ui(page, '.composer button[type="submit"]').click()
}

export interface PinState {
  n: string
  hidden: boolean
  anchor: string | undefined
  x: number
  y: number
}

/** Every pin as it is now (read inside the page). */
export function pins(page: Page): Promise<PinState[]> {
  return page.evaluate(() =>
    [...(document.querySelector('marginalia-overlay')?.shadowRoot?.querySelectorAll<HTMLElement>('.pin') ?? [])].map((p) => ({
      n: p.textContent ?? '',
      hidden: p.hidden,
      anchor: p.dataset.anchor,
      x: parseFloat(p.style.left),
      y: parseFloat(p.style.top),
    })),
  )
}

/** Two animation frames: all the time "at once" gives the overlay to catch up. */
export function frames(page: Page): Promise<void> {
  return page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))))
}

/** The React fixture app (test/fixtures/apps/anchor-list) bundled with the real react and react-dom packages. */
export async function reactListBundle(): Promise<string> {
  const result = await build({
    entryPoints: [path.resolve(import.meta.dirname, '../../fixtures/apps/anchor-list/main.jsx')],
    bundle: true,
    write: false,
    format: 'iife',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text.replace(/<\/script/gi, '<\\/script')
}
