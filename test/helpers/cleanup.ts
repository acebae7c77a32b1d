import { afterEach } from 'vitest'

/** What a test opened and must close: servers, stores, processes, temporary folders. */
export type Cleanups = (() => unknown)[]

/** Run `cleanups` newest first (a server closes before the store it serves), and empty the list. */
export async function runCleanups(cleanups: Cleanups): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c()
}

/**
 * The file's cleanups: a test pushes what it opened, and they run after each test, newest first.
 * Call it at the top level of the test file.
 */
export function useCleanups(): Cleanups {
  const cleanups: Cleanups = []
  afterEach(() => runCleanups(cleanups))
  return cleanups
}
