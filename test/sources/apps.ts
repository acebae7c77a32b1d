/** The fixture apps of test/fixtures/apps, copied per test inside the repository (so they resolve its packages). */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/apps')
const TMP = path.resolve(import.meta.dirname, '.tmp')

/** A fresh copy of fixture app `name`; `cleanups` gets its removal. */
export function copyApp(name: string, cleanups: (() => unknown)[]): string {
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
