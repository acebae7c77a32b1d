/** Open a store over the file adapter: the default for the CLI, the server and the Vite plugin. */
import { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './file/file-adapter.js'
import { asFileError } from './file/errors.js'
import { Store, type StoreOptions } from './core.js'
import type { StoreAdapter } from './persistence.js'

export interface OpenStoreOptions extends StoreOptions, Omit<FileAdapterOptions, 'file' | 'onError'> {
  /** The store file (default `.marginalia/store.json` under the current directory). */
  file?: string
  /** Use another persistence adapter instead of the file (e.g. a database). */
  adapter?: StoreAdapter
}

/** Open (or lazily create) a persistent store. Nothing is written until the first mutation. */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const { file, adapter: custom, lockStaleMs, lockTimeoutMs, compactMinBytes, watchFiles, pollIntervalMs, archiveDirectory, io, ...storeOptions } = options
  const adapter =
    custom ??
    new FileAdapter({
      file: file ?? DEFAULT_STORE_FILE,
      lockStaleMs,
      lockTimeoutMs,
      compactMinBytes,
      watchFiles,
      pollIntervalMs,
      archiveDirectory,
      io,
      onError: storeOptions.onError,
    })
  const loaded = await adapter.load()
  try {
    return new Store(adapter, loaded, storeOptions)
  } catch (e) {
    // The store's data was read but does not make a store (a log event that does not fit): close
    // what load() opened (the log's file handle) instead of leaving it to the garbage collector.
    await adapter.dispose?.().catch(() => {})
    throw custom ? e : asFileError(e)
  }
}
