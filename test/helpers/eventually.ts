import { expect } from 'vitest'

/**
 * `expect.poll` with room for a loaded machine (CI shares two cores between a browser, servers and
 * other test files): re-checks every 50 ms, fails after `timeoutMs` (default 15 s) — a slow pass
 * costs only time, a real failure still fails.
 */
export function eventually<T>(check: () => T, timeoutMs = 15_000): ReturnType<typeof expect.poll<T>> {
  return expect.poll(check, { timeout: timeoutMs, interval: 50 })
}
