import { expect, it } from 'vitest'
import { useCleanups } from '../test/helpers/cleanup.js'
import { runAuthFlood } from '../test/helpers/flood.js'
import { report } from './report.js'

const cleanups = useCleanups()

it('auth flood: 3 000 bogus well-formed agent tokens, 100 at a time, while a person reads and writes', async () => {
  const f = await runAuthFlood(cleanups, { requests: 3_000, inFlight: 100, rounds: 40 })
  report('auth-flood/3000x100', f)
  expect(f.requests).toBe(3_000)
  expect(f.limited).toBeGreaterThanOrEqual(2_800)
  expect(f.retryAfterEverywhere).toBe(true)
  expect(f.duringMs).toBeLessThan(Math.max(20 * f.baselineMs, 2_000))
})
