/** The fixture apps of test/fixtures/apps, copied per test inside the repository (so they resolve its packages). */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import type { Annotation } from '../../src/store/model.js'
import { eventually } from './eventually.js'
import { type Cleanups } from './cleanup.js'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/apps')
const TMP = path.resolve(import.meta.dirname, '.tmp')

/** A fresh copy of fixture app `name`; `cleanups` gets its removal. */
export function copyApp(name: string, cleanups: Cleanups): string {
  mkdirSync(TMP, { recursive: true })
  const dir = mkdtempSync(path.join(TMP, `${name}-`))
  cpSync(path.join(FIXTURES, name), dir, { recursive: true })
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** 1-based line and column of the first occurrence of `needle` in the file. */
export function positionOf(file: string, needle: string): { line: number; column: number } {
  const lines = readFileSync(file, 'utf8').split('\n')
  const line = lines.findIndex((l) => l.includes(needle))
  if (line < 0) throw new Error(`${needle} not in ${file}`)
  return { line: line + 1, column: lines[line]!.indexOf(needle) + 1 }
}

/** The overlay's own elements on `page`. */
const overlayUi = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/** What the page shows of Marginalia: the overlay's tag and host, the toolbar's state and alert, the loader's note. */
async function overlayState(page: Page): Promise<unknown> {
  // A string, run in the page: this file is compiled without the DOM's types.
  const read = `(() => {
    const host = document.querySelector('marginalia-overlay')
    const root = host && host.shadowRoot
    const agent = root && root.querySelector('.agent')
    const alert = root && root.querySelector('.alert')
    const note = document.querySelector('[data-marginalia-loader]:not(script)')
    return {
      url: location.href,
      readyState: document.readyState,
      scripts: [...document.querySelectorAll('script[data-marginalia], script[data-marginalia-loader]')].map((s) => s.src),
      overlayLoaded: 'Marginalia' in window,
      host: host ? (host.isConnected ? 'in the page' : 'not in the page') : 'none',
      agent: agent ? { state: agent.getAttribute('data-state'), text: agent.textContent, title: agent.getAttribute('title') } : null,
      alert: alert && !alert.hidden ? alert.textContent : null,
      loaderNote: note ? note.textContent : null,
    }
  })()`
  return page.evaluate(read).catch((e: unknown) => `unreadable: ${e instanceof Error ? e.message : String(e)}`)
}

/**
 * Wait until the overlay is up and talking to its server. When it is not within 30 s, the error
 * says what the page showed and the end of `log` (the dev server's output, where one started it).
 */
export async function overlayReady(page: Page, log?: () => string): Promise<void> {
  try {
    await overlayUi(page, '.agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
  } catch (e) {
    const output = log?.().slice(-4_000)
    throw new Error(`the overlay did not connect to its server within 30 s: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\nthe page: ${JSON.stringify(await overlayState(page))}${output !== undefined ? `\nthe dev server's output (end):\n${output}` : ''}`, { cause: e })
  }
}

/** Click `target` in annotate mode as a person does, write `comment`, send it; the stored annotation (from `api`). */
export async function annotateByClick(page: Page, api: string, target: string, comment: string): Promise<Annotation> {
  if ((await overlayUi(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await overlayUi(page, '.annotate').click()
  await page.locator(target).first().click()
  await overlayUi(page, '.composer textarea').fill(comment)
  await overlayUi(page, '.composer button[type="submit"]').click()
  let found: Annotation | undefined
  await eventually(async () => {
    const body = (await (await fetch(`${api}/api/annotations`)).json()) as { annotations: Annotation[] }
    found = body.annotations.find((a) => a.comment === comment)
    return found !== undefined
  }).toBe(true)
  return found!
}
