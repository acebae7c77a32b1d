import { describe, expect, it } from 'vitest'
import { runCrashes } from './lib/crash.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const seed = Number(process.env.CRASH_SEED ?? 20_261_122)

describe('crash consistency: kill -9 a writer at random moments', () => {
  it('12 kills (4 during a snapshot): the store always opens, nothing that resolved is lost, a restart needs no repair', async () => {
    const figures = await runCrashes({ kills: 12, lanes: 3, seed, compactionEvery: 3, freshFileEvery: 1_000, maxDelayMs: 500 }, cleanups)
    const { verifyMs, ...rest } = figures
    console.log(`crash (seed ${seed}): ${JSON.stringify({ ...rest, verifyMsMax: Math.max(...verifyMs) })}`)
    expect(figures.kills).toBe(12)
    expect(figures.mutationsVerified).toBeGreaterThan(50)
    expect(figures.killsDuringCompaction).toBeGreaterThanOrEqual(1)
  }, 90_000)
})
