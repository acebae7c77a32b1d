import { describe, expect, it } from 'vitest'
import { fuzzInProcess, fuzzStdio } from './lib/fuzz-run.js'
import { TOOLS } from './lib/fuzz.js'

/** Seeded: a failure prints the seed and the shrunk case; FC_SEED replays another seed. */
const seed = Number(process.env.FC_SEED ?? 20_261_122)

describe('fuzzed tool inputs over MCP', () => {
  it('10 000 malformed argument objects in-process: clean errors or valid results, nothing changed by a refusal, no pollution', async () => {
    const figures = await fuzzInProcess({ seed, cases: 10_000 })
    console.log(`fuzz (in-process): ${JSON.stringify(figures)}`)
    expect(figures.cases).toBe(10_000)
    for (const tool of TOOLS) expect(figures.byTool[tool] ?? 0).toBeGreaterThan(300)
    expect(figures.results).toBeGreaterThan(1_000)
    expect(figures.errors.INVALID_PARAMS).toBeGreaterThan(1_000)
    expect(figures.mutations).toBeGreaterThan(50)
  }, 120_000)

  it('the built CLI over stdio survives the same kind of input', async () => {
    const figures = await fuzzStdio({ seed: seed + 1, cases: 600 })
    console.log(`fuzz (stdio): ${JSON.stringify(figures)}`)
    expect(figures.cases).toBe(600)
    expect(figures.results).toBeGreaterThan(50)
  }, 120_000)
})
