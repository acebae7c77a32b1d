/** Completion of session ids, for the arguments of prompts and resource templates alike. */
import type { Store } from '../store/store.js'

/** Session ids that start with `prefix` (or whose URL contains it), newest first, at most 100. */
export function completeSessionIds(store: Store, prefix: string | undefined): string[] {
  const needle = (prefix ?? '').toLowerCase()
  return store
    .listSessions()
    .filter((s) => s.id.toLowerCase().startsWith(needle) || s.url.toLowerCase().includes(needle))
    .reverse()
    .slice(0, 100)
    .map((s) => s.id)
}
