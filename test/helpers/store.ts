import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createMemoryStore, type IdKind, type StoreOptions } from '../../src/index.js'
import type { Cleanups } from './cleanup.js'

/** A clock that advances one second per call, from a fixed instant. */
function fixedClock(start = Date.UTC(2026, 0, 1, 12, 0, 0)): () => Date {
  let t = start
  return () => new Date((t += 1000))
}

/** Ids `ses_1`, `ann_2`, `rep_3` … in call order. */
export function counterIds(): (kind: IdKind) => string {
  let n = 0
  const prefix: Record<IdKind, string> = { session: 'ses', annotation: 'ann', reply: 'rep', identity: 'idn', capture: 'cap' }
  return (kind) => `${prefix[kind]}_${String(++n).padStart(4, '0')}`
}

export function deterministic(extra: StoreOptions = {}): StoreOptions {
  return { clock: fixedClock(), ids: counterIds(), ...extra }
}

export function memoryStore(extra: StoreOptions = {}) {
  return createMemoryStore(deterministic(extra))
}

/** A fresh temporary directory, removed by `cleanups` after the test; `file` is where the default store goes in it. */
export function testDir(cleanups: Cleanups, prefix?: string): { dir: string; file: string } {
  const { dir, file, cleanup } = tempDir(prefix)
  cleanups.push(cleanup)
  return { dir, file }
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'marginalia-test-'): { dir: string; file: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  return { dir, file: path.join(dir, '.marginalia', 'store.json'), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}
