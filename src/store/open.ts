/** Open a store at a location: a file (the default), or any place `STORE_LOCATIONS` (locations.ts) names. */
import { DEFAULT_STORE_FILE } from './defaults.js'
import type { FileAdapterOptions } from './file/file-adapter.js'
import { Store, type StoreOptions } from './core.js'
import { ValidationError } from './errors.js'
import type { StoreAdapter } from './persistence.js'
import { MemoryBlobStore, type BlobStore } from './blobs/blob-store.js'
import { STORE_LOCATIONS, locationOf, matchLocation, type StoreLocation } from './locations.js'

export interface OpenStoreOptions extends StoreOptions, Omit<FileAdapterOptions, 'file' | 'onError'> {
  /**
   * The store file (default `.marginalia/store.json` under the current directory), or any other
   * location locations.ts knows (the CLI's `--store`: a `postgres://` URL opens the database).
   */
  file?: string
  /** Use another persistence adapter instead of the file (e.g. a database). */
  adapter?: StoreAdapter
  /** A location with a known prefix: a PostgreSQL connection URL (`postgres://user@host:5432/db`) or a `file:` URL. */
  url?: string
  /** The PostgreSQL schema for `url` (default `marginalia`). */
  schema?: string
}

/** Open (or lazily create) a persistent store. Nothing is written until the first mutation. */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const { file, adapter: given, url, schema, lockStaleMs, lockTimeoutMs, compactMinBytes, watchFiles, pollIntervalMs, archiveDirectory, io, ...storeOptions } = options
  const at = url ?? file ?? DEFAULT_STORE_FILE
  const place = given ? undefined : url !== undefined ? knownLocation(url) : locationOf(at)
  const adapter = given ?? (await place!.open(at, { schema, lockStaleMs, lockTimeoutMs, compactMinBytes, watchFiles, pollIntervalMs, archiveDirectory, io, onError: storeOptions.onError }))
  const loaded = await adapter.load()
  try {
    // Attachments go where the adapter keeps them (`blobStore()`), unless the caller chose.
    return new Store(adapter, loaded, storeOptions)
  } catch (e) {
    // The store's data was read but does not make a store (a log event that does not fit): close
    // what load() opened (the log's file handle) instead of leaving it to the garbage collector.
    await adapter.dispose?.().catch(() => {})
    throw place?.refusal ? place.refusal(e) : e
  }
}

/**
 * The adapter and blob store for a `--store` value (a file path or a URL locations.ts knows), not
 * yet loaded: for commands that move a whole store (`marginalia export` / `import`).
 */
export async function openPlace(store: string): Promise<{ adapter: StoreAdapter; blobs: BlobStore }> {
  const adapter = await locationOf(store).open(store, { watchFiles: false, pollIntervalMs: 0 })
  // An adapter without a blob store of its own has no attachments that outlive a process.
  return { adapter, blobs: adapter.blobStore?.() ?? new MemoryBlobStore() }
}

function knownLocation(url: string): StoreLocation {
  const place = matchLocation(url)
  if (!place) throw new ValidationError([{ path: 'url', message: `must start with ${STORE_LOCATIONS.map((l) => l.prefix).join(' or ')} (got "${url.slice(0, 60)}")` }])
  return place
}
