/** Request limits: a token bucket per key (an identity, the operator, a client address). */
import { HttpError } from './respond.js'

export const DEFAULT_RATE_PER_SECOND = 20
export const DEFAULT_RATE_BURST = 60

/** A token bucket per key: `perSecond` sustained, `burst` at once. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one token for `key`; 429 with Retry-After when there is none. */
  take(key: string, what = 'Too many requests'): void {
    const b = this.check(key, what)
    if (!b) return
    b.tokens -= 1
    this.buckets.set(key, b)
    if (this.buckets.size > 10_000) for (const [k, v] of this.buckets) if (v.tokens >= this.burst) this.buckets.delete(k)
  }

  /** 429 with Retry-After when `key` has no token left, taking none; else its bucket (undefined: no limit). */
  check(key: string, what = 'Too many requests'): { tokens: number; at: number } | undefined {
    if (this.perSecond <= 0) return undefined
    const now = this.now()
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond)
    b.at = now
    if (b.tokens < 1) {
      this.buckets.set(key, b)
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond))
      throw new HttpError(429, 'RATE_LIMITED', `${what}: at most ${this.perSecond} per second (bursts of ${this.burst}). Retry in ${wait} s.`, { retryAfterSeconds: wait }, { 'Retry-After': String(wait) })
    }
    return b
  }
}
