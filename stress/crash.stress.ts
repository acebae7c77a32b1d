import { afterEach, expect, it } from 'vitest'
import { runCrashes } from '../test/e2e/reliability/lib/crash.js'
import { report } from './report.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const seed = Number(process.env.CRASH_SEED ?? Date.now() % 2 ** 31)

it('crash: 240 kills -9 (one in four as a snapshot is written), 4 lanes', async () => {
  const figures = await runCrashes({ kills: 240, lanes: 4, seed, compactionEvery: 4, freshFileEvery: 8, maxDelayMs: 800 }, cleanups)
  const { verifyMs, ...rest } = figures
  const sorted = [...verifyMs].sort((a, b) => a - b)
  report('crash/240', { seed, ...rest, restartMs: { median: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.floor(sorted.length * 0.95)], max: sorted.at(-1) } })
  expect(figures.kills).toBe(240)
  expect(figures.killsDuringCompaction).toBeGreaterThanOrEqual(40)
  expect(figures.tornTailsFound).toBeGreaterThanOrEqual(1)
})
