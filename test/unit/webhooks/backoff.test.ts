import { describe, expect, it } from 'vitest'
import { backoffDelay, DEFAULT_RETRY, nextDelay, retryAfterMs } from '../../../src/webhooks/backoff.js'

describe('webhook retries', () => {
  it('doubles from 5 s, with jitter between half and all of the step, capped at an hour', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, DEFAULT_RETRY, () => 1 - 1e-12))).toEqual([5_000, 10_000, 20_000, 40_000])
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, DEFAULT_RETRY, () => 0))).toEqual([2_500, 5_000, 10_000, 20_000])
    expect(backoffDelay(30, DEFAULT_RETRY, () => 1 - 1e-12)).toBe(3_600_000)
    expect(backoffDelay(500, DEFAULT_RETRY, () => 0)).toBe(1_800_000)
  })

  it('spreads endpoints that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(6, DEFAULT_RETRY)))
    expect(delays.size).toBeGreaterThan(40)
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(80_000)
  })

  it('keeps trying for the whole day before an endpoint is disabled (~40 tries)', () => {
    let t = 0
    let tries = 0
    while (t < DEFAULT_RETRY.disableAfterMs) {
      tries++
      t += backoffDelay(tries, DEFAULT_RETRY, () => 0.5)
    }
    expect(tries).toBeGreaterThan(20)
    expect(tries).toBeLessThan(50)
  })

  it('honours Retry-After in seconds or as a date when it asks for longer, never past the cap', () => {
    const now = Date.parse('2026-11-29T00:00:00Z')
    expect(retryAfterMs('120', now, DEFAULT_RETRY.maxMs)).toBe(120_000)
    expect(retryAfterMs('Sun, 29 Nov 2026 00:10:00 GMT', now, DEFAULT_RETRY.maxMs)).toBe(600_000)
    expect(retryAfterMs('Sun, 29 Nov 2020 00:10:00 GMT', now, DEFAULT_RETRY.maxMs)).toBe(0)
    expect(retryAfterMs('999999', now, DEFAULT_RETRY.maxMs)).toBe(3_600_000)
    expect(retryAfterMs('soon', now, DEFAULT_RETRY.maxMs)).toBeUndefined()
    expect(retryAfterMs(undefined, now, DEFAULT_RETRY.maxMs)).toBeUndefined()
    expect(nextDelay(1, 120_000, DEFAULT_RETRY, () => 0)).toBe(120_000)
    expect(nextDelay(1, 1_000, DEFAULT_RETRY, () => 0)).toBe(2_500)
  })
})
