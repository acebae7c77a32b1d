import { afterEach, describe, expect, it } from 'vitest'
import { runContention } from './lib/contention.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('contention: several processes, one store file', () => {
  it('4 processes × 250 concurrent mutations: nothing lost, final rev = start + successes, every process sees every event once, in order', async () => {
    const figures = await runContention({ processes: 4, perProcess: 250, inFlight: 20 }, cleanups)
    console.log(`contention: ${JSON.stringify(figures)}`)
    expect(figures.attempted).toBe(1_000)
    expect(figures.succeeded).toBeGreaterThan(700)
  }, 90_000)
})
