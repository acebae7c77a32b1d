/**
 * The store's public face: the `Store` class (core.ts), the memory store, and the types of its
 * queries. `openStore` (open.ts) opens one at a location: a file by default (locations.ts).
 */
import { Store, type StoreOptions } from './core.js'
import { MemoryAdapter } from './memory-adapter.js'

export { Store, type StoreOptions } from './core.js'
export { type IdKind } from './ids.js'
export { orderKey } from './indexes.js'
export type { AnnotationQuery, AnnotationSearch, ChangesSinceOptions, Page, PageOptions } from './queries.js'
export { SEARCH_SORTS } from './queries.js'

export interface MemoryStoreOptions extends StoreOptions {
  /** Default directory for `archive()` (a memory store has no file to put one beside). */
  archiveDirectory?: string
}

/** A store that keeps everything in memory (tests, embedding). */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  const { archiveDirectory, ...storeOptions } = options
  return new Store(new MemoryAdapter(undefined, { archiveDirectory }), { snapshot: null, events: [] }, storeOptions)
}
