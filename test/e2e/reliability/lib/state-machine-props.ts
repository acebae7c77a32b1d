/** The two state-machine properties (memory store; file store + reopen), sized by the caller. */
import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { createMemoryStore, openStore, type Store } from '../../../../src/index.js'
import { Runner, harness, programArb, type Outcome, type RunFigures } from './state-machine.js'

export interface PropertySize {
  seed: number
  numRuns: number
  maxCommands: number
  /** Check every query after this many commands (default: 1 in memory, 5 on file). */
  checkEvery?: number
}

export interface PropertyFigures extends RunFigures {
  runs: number
  compactions?: number
  reopens?: number
}

function add(total: PropertyFigures, f: RunFigures): void {
  total.commands += f.commands
  total.succeeded += f.succeeded
  total.refused += f.refused
  total.events += f.events
  total.queryChecks += f.queryChecks
}

function scratch(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'marginalia-prop-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Memory store, deterministic clock and ids, every query checked after every command. */
export async function memoryStoreProperty(size: PropertySize): Promise<PropertyFigures> {
  const total: PropertyFigures = { runs: 0, commands: 0, succeeded: 0, refused: 0, events: 0, queryChecks: 0 }
  const { dir, cleanup } = scratch()
  try {
    await fc.assert(
      fc.asyncProperty(programArb(size.maxCommands), fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (program, idSeed) => {
        const h = harness(idSeed)
        const store = createMemoryStore({ clock: h.clock, ids: h.ids, archiveDirectory: path.join(dir, String(total.runs)) })
        total.runs++
        try {
          const runner = new Runner(store, h, { checkEvery: size.checkEvery ?? 1 })
          await runner.run(program)
          add(total, runner.figures)
        } finally {
          await store.close()
        }
      }),
      { seed: size.seed, numRuns: size.numRuns },
    )
  } finally {
    cleanup()
  }
  return total
}

/**
 * File store (small compaction threshold, so snapshots and log rotations happen mid-run): the
 * same checks, the same final state as a memory store given the same program, and a store
 * reopened from the file equal to both.
 */
export async function fileStoreProperty(size: PropertySize): Promise<PropertyFigures> {
  const total: PropertyFigures = { runs: 0, commands: 0, succeeded: 0, refused: 0, events: 0, queryChecks: 0, reopens: 0 }
  const { dir, cleanup } = scratch()
  try {
    await fc.assert(
      fc.asyncProperty(
        programArb(size.maxCommands),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(256, 2_048, 1e9),
        async (program, idSeed, compactMinBytes) => {
          const run = total.runs++
          // 1. memory
          const hm = harness(idSeed)
          const memory = createMemoryStore({ clock: hm.clock, ids: hm.ids, archiveDirectory: path.join(dir, `m${run}`) })
          let expected: Outcome
          try {
            expected = await new Runner(memory, hm, { checkEvery: size.checkEvery ?? 5 }).run(program)
          } finally {
            await memory.close()
          }
          // 2. file
          const hf = harness(idSeed)
          const file = path.join(dir, `f${run}`, 'store.json')
          const options = { file, clock: hf.clock, ids: hf.ids, pollIntervalMs: 0, watchFiles: false, compactMinBytes }
          const store = await openStore(options)
          let live: Outcome
          try {
            const runner = new Runner(store, hf, { checkEvery: size.checkEvery ?? 5 })
            live = await runner.run(program)
            add(total, runner.figures)
          } finally {
            await store.close()
          }
          expect(live).toStrictEqual(expected)
          // 3. reopen
          const reopened: Store = await openStore(options)
          try {
            total.reopens!++
            expect(outcomeOf(reopened)).toStrictEqual(live)
          } finally {
            await reopened.close()
          }
        },
      ),
      { seed: size.seed, numRuns: size.numRuns },
    )
  } finally {
    cleanup()
  }
  return total
}

function outcomeOf(store: Store): Outcome {
  return { sessions: store.listSessions(), annotations: store.listAnnotations(), events: store.changesSince(0), rev: store.rev }
}
