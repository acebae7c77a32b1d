/**
 * When to try a failed delivery again: exponential backoff with jitter, a cap, and the
 * receiver's `Retry-After` honoured. With the defaults (5 s doubling to at most 1 h, an endpoint
 * disabled after failing for 24 h) a receiver that is down keeps getting tries for a whole day,
 * about forty of them.
 */

export interface RetryPolicy {
  /** The first retry's delay before jitter (ms). */
  baseMs: number
  /** No delay longer than this (ms), Retry-After included. */
  maxMs: number
  /** An endpoint whose deliveries have failed for this long is disabled (ms). */
  disableAfterMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 5_000, maxMs: 3_600_000, disableAfterMs: 24 * 3_600_000 }

/**
 * The delay before attempt `failures + 1`, after `failures` failures in a row (≥ 1): base·2^(failures-1)
 * capped at maxMs, then "equal jitter" (a uniform draw between half and all of it) so endpoints
 * that failed together do not retry together. `random` is in [0, 1).
 */
export function backoffDelay(failures: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 40)
  const full = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent)
  return Math.round(full / 2 + random() * (full / 2))
}

/**
 * A `Retry-After` header as a delay in ms: delta-seconds or an HTTP date; undefined when absent
 * or unreadable. Never negative, never past `maxMs`.
 */
export function retryAfterMs(header: string | undefined, now: number, maxMs: number): number | undefined {
  if (header === undefined) return undefined
  const value = header.trim()
  if (/^\d+$/.test(value)) return Math.min(maxMs, Number(value) * 1000)
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.min(maxMs, Math.max(0, date - now))
}

/** The delay after a failure: the backoff, or the receiver's Retry-After when it asks for longer. */
export function nextDelay(failures: number, retryAfter: number | undefined, policy: RetryPolicy, random?: () => number): number {
  const backoff = backoffDelay(failures, policy, random)
  return retryAfter !== undefined ? Math.max(backoff, retryAfter) : backoff
}
