import path from 'node:path'
import { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './file-adapter.js'
import { Store, type StoreOptions } from './store.js'
import type { StoreAdapter } from './persistence.js'

export interface OpenStoreOptions extends StoreOptions, Omit<FileAdapterOptions, 'file' | 'onError'> {
  /** The store file (default `.marginalia/store.json` under the current directory). */
  file?: string
  /** Use another persistence adapter instead of the file (e.g. a database). */
  adapter?: StoreAdapter
}

/** Open (or lazily create) a persistent store. Nothing is written until the first mutation. */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const { file, adapter: custom, lockStaleMs, lockTimeoutMs, compactMinBytes, watchFiles, io, ...storeOptions } = options
  const adapter =
    custom ??
    new FileAdapter({
      file: file ?? DEFAULT_STORE_FILE,
      lockStaleMs,
      lockTimeoutMs,
      compactMinBytes,
      watchFiles,
      io,
      onError: storeOptions.onError,
    })
  const loaded = await adapter.load()
  const archiveDirectory = storeOptions.archiveDirectory ?? (custom ? undefined : path.join(path.dirname(path.resolve(file ?? DEFAULT_STORE_FILE)), 'archive'))
  try {
    return new Store(adapter, loaded, { ...storeOptions, archiveDirectory })
  } catch (e) {
    // The files were read but do not make a store (a log event that does not fit): close what
    // load() opened (the log's file handle) instead of leaving it to the garbage collector.
    await adapter.dispose?.().catch(() => {})
    throw e
  }
}
