/** How a command that opens the store starts and stops: once, flushing the store's writes. */
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Store } from '../store/store.js'
import { log } from './command.js'

/**
 * Loading a big store leaves its parse garbage (the snapshot text, temporary arrays) in the heap
 * until V8 gets round to it, and V8 keeps the pages meanwhile. A long-running server collects it
 * once, right away, so its memory reflects what it holds (measured at 100 000 annotations:
 * RSS 335 → 260 MB).
 */
export function releaseLoadGarbage(store: Store): void {
  if (store.rev < 10_000) return // small stores: nothing worth a full collection
  v8.setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (() => void) | undefined
  gc?.()
}

/**
 * The one way a server command stops: once, closing what serves, then the store (flushing its
 * writes), then exiting with `exitCode` (0 unless a failure stopped it) — or 1 if that takes
 * over ten seconds.
 */
export function stopper(store: Store, closeServing: () => Promise<void>): (why: string, exitCode?: number) => Promise<void> {
  let stopping = false
  return async (why, exitCode = 0) => {
    if (stopping) return
    stopping = true
    log(`stopping (${why})`)
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    await closeServing()
    await closeStore(store)
    process.exit(exitCode)
  }
}

export async function closeStore(store: Store): Promise<void> {
  try {
    await store.close()
  } catch (e) {
    log(`could not close the store cleanly: ${e instanceof Error ? e.message : String(e)}`)
  }
}
