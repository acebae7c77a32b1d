import { describe, expect, it } from 'vitest'
import { fileStoreProperty, memoryStoreProperty } from './lib/state-machine-props.js'

/** Seeded: a failure prints the seed and the shrunk counterexample; FC_SEED replays another seed. */
const seed = Number(process.env.FC_SEED ?? 20_261_122)

describe('state machine properties (fast-check, against a reference model)', () => {
  it('memory store: random command sequences match the model; one event per success; queries match brute force', async () => {
    const figures = await memoryStoreProperty({ seed, numRuns: 100, maxCommands: 50 })
    console.log(`state machine (memory): ${JSON.stringify(figures)}`)
    expect(figures.runs).toBe(100)
    expect(figures.succeeded).toBeGreaterThan(800)
    expect(figures.refused).toBeGreaterThan(800)
  }, 60_000)

  it('file store: same results as the memory store, and a reopened store equals both', async () => {
    const figures = await fileStoreProperty({ seed: seed + 1, numRuns: 20, maxCommands: 40 })
    console.log(`state machine (file): ${JSON.stringify(figures)}`)
    expect(figures.reopens).toBe(20)
    expect(figures.succeeded).toBeGreaterThan(50)
  }, 60_000)
})
