/**
 * test/fixtures/mutator.mjs as a test drives it: several processes on one store (a file or a
 * PostgreSQL schema), each started on a barrier so they really overlap, each reporting every event
 * its changes$ delivered.
 */
import path from 'node:path'
import type { Cleanups } from './cleanup.js'
import { spawnNode } from './process.js'

const MUTATOR = path.resolve(import.meta.dirname, '../fixtures/mutator.mjs')

/** What a mutator saw: the rev it opened at, the revs its changes$ delivered, the annotations it wrote. */
interface MutatorReport {
  label: string
  openedAt: number
  rev: number
  seen: number[]
  mine: string[]
}

export interface Mutator {
  /** It has opened the store and waits for `go`. */
  ready: Promise<void>
  go: () => void
  /** Its report, once it has seen `expectedRev` and exited 0. */
  report: Promise<MutatorReport>
}

/** `node mutator.mjs <store> <sessionId> <count> <expectedRev> <label>`; waits on it are bounded by `timeoutMs`. */
export function startMutator(cleanups: Cleanups, store: string, sessionId: string, count: number, expectedRev: number, label: string, timeoutMs = 120_000): Mutator {
  const p = spawnNode(cleanups, [MUTATOR, store, sessionId, String(count), String(expectedRev), label])
  const ready = p.waitFor('stdout', /^ready\n/, timeoutMs).then(() => undefined)
  const report = p.exited(timeoutMs).then((code) => {
    if (code !== 0) throw new Error(`mutator ${label} exited with ${code}: ${p.stderr()}`)
    return JSON.parse(p.stdout().slice('ready\n'.length)) as MutatorReport
  })
  // Awaited by the test only after `ready`: a failure before that is reported by `ready`.
  report.catch(() => {})
  return { ready, go: () => p.child.stdin.end('go\n'), report }
}
