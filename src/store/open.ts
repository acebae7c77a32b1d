/** Open a store over the file adapter: the default for the CLI, the server and the Vite plugin. */
import { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './file/file-adapter.js'
import { asFileError } from './file/errors.js'
import { Store, type StoreOptions } from './core.js'
import { ValidationError } from './errors.js'
import type { StoreAdapter } from './persistence.js'
import path from 'node:path'
import { FileBlobStore } from './blobs/file-blob-store.js'
import type { BlobStore } from './blobs/blob-store.js'

export interface OpenStoreOptions extends StoreOptions, Omit<FileAdapterOptions, 'file' | 'onError'> {
  /** The store file (default `.marginalia/store.json` under the current directory). */
  file?: string
  /** Use another persistence adapter instead of the file (e.g. a database). */
  adapter?: StoreAdapter
  /** A PostgreSQL connection URL (`postgres://user@host:5432/db`): the shared store instead of the file. */
  url?: string
  /** The PostgreSQL schema for `url` (default `marginalia`). */
  schema?: string
}

/** Open (or lazily create) a persistent store. Nothing is written until the first mutation. */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const { file, adapter: given, url, schema, lockStaleMs, lockTimeoutMs, compactMinBytes, watchFiles, pollIntervalMs, archiveDirectory, io, ...storeOptions } = options
  // A postgres:// URL given as the file (the CLI's --store) selects the database too.
  const target = url ?? (file !== undefined && /^postgres(ql)?:\/\//i.test(file) ? file : undefined)
  const custom = given ?? (target !== undefined ? await openUrl(target, { schema, pollIntervalMs, onError: options.onError }) : undefined)
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
    // Attachments beside the store file: `.marginalia/attachments/<sha256>.<ext>`.
    // A shared store keeps them in its database (the PostgreSQL adapter's `blobs` table).
    const blobs = storeOptions.blobs ?? (custom ? blobStoreOf(custom) : new FileBlobStore(path.join(path.dirname(file ?? DEFAULT_STORE_FILE), 'attachments')))
    return new Store(adapter, loaded, { ...storeOptions, ...(blobs ? { blobs } : {}) })
  } catch (e) {
    // The store's data was read but does not make a store (a log event that does not fit): close
    // what load() opened (the log's file handle) instead of leaving it to the garbage collector.
    await adapter.dispose?.().catch(() => {})
    throw custom ? e : asFileError(e)
  }
}

/** The blob store an adapter brings along (PostgreSQL: its `blobs` table), if any. */
function blobStoreOf(adapter: StoreAdapter): BlobStore | undefined {
  const withBlobs = adapter as StoreAdapter & { blobStore?: () => BlobStore }
  return typeof withBlobs.blobStore === 'function' ? withBlobs.blobStore() : undefined
}

/**
 * The adapter and blob store for a `--store` value (a file path or a postgres:// URL), not yet
 * loaded: for commands that move a whole store (`marginalia export` / `import`).
 */
export async function openPlace(store: string): Promise<{ adapter: StoreAdapter; blobs: BlobStore }> {
  if (/^postgres(ql)?:\/\//i.test(store)) {
    const adapter = (await openUrl(store, {}))!
    return { adapter, blobs: blobStoreOf(adapter)! }
  }
  return { adapter: new FileAdapter({ file: store, watchFiles: false, pollIntervalMs: 0 }), blobs: new FileBlobStore(path.join(path.dirname(store), 'attachments')) }
}

/** The adapter for a store URL: `postgres://…` (loaded only when used), or a file path / `file:` URL. */
async function openUrl(url: string, o: { schema?: string; pollIntervalMs?: number; onError?: (e: unknown) => void }): Promise<StoreAdapter | undefined> {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const { PostgresAdapter } = await import('./postgres/postgres-adapter.js')
    return new PostgresAdapter({ url, schema: o.schema, pollIntervalMs: o.pollIntervalMs, onError: o.onError })
  }
  if (url.startsWith('file:')) return new FileAdapter({ file: new URL(url).pathname, pollIntervalMs: o.pollIntervalMs, onError: o.onError })
  throw new ValidationError([{ path: 'url', message: `must start with postgres:// or file: (got "${url.slice(0, 60)}")` }])
}
