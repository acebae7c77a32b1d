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

/** Wait until the overlay is up and talking to its server. */
export async function overlayReady(page: Page): Promise<void> {
  await overlayUi(page, '.agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
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
