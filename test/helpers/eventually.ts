import { expect } from 'vitest'

/**
 * `expect.poll` with room for a loaded machine (CI shares two cores between a browser, servers and
 * other test files): re-checks every 50 ms, fails after `timeoutMs` (default 15 s) — a slow pass
 * costs only time, a real failure still fails.
 */
export function eventually<T>(check: () => T, timeoutMs = 15_000): ReturnType<typeof expect.poll<T>> {
  return expect.poll(check, { timeout: timeoutMs, interval: 50 })
}

/**
 * Wait until `check()` holds, re-checked every `intervalMs`; fail after `timeoutMs` (default 10 s)
 * naming `what`. For a step of a test that waits on a condition before acting; an assertion that
 * waits is {@link eventually}.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, intervalMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
