export * from './model.js'
export * from './errors.js'
export * from './events.js'
export { TRANSITIONS, allowedFrom, canApply, type Action, type StatusAction } from './machine.js'
export {
  Store,
  createMemoryStore,
  defaultIds,
  orderKey,
  type AnnotationQuery,
  type Page,
  type PageOptions,
  DEFAULT_EVENT_WINDOW,
  DEFAULT_POLL_INTERVAL_MS,
  type StoreOptions,
  type MemoryStoreOptions,
  type IdKind,
  type ChangesSinceOptions,
} from './store.js'
export { openStore, type OpenStoreOptions } from './open.js'
export { type StoreState } from './reducer.js'
export { shardGet, shardValues, type Shards } from './shards.js'
export { snapshotOf, type StoreAdapter, type StoreView, type Snapshot, type LoadResult, type Decision } from './persistence.js'
export { MemoryAdapter, type MemoryAdapterOptions } from './memory-adapter.js'
export { FileAdapter, DEFAULT_STORE_FILE, type FileAdapterOptions } from './file/file-adapter.js'
export { STORE_FORMAT, STORE_FORMAT_VERSION } from './file/snapshot-format.js'
export { type FileIo } from './file/io.js'
export { StoreFileError } from './fs/errors.js'
export { DirectoryArchive, archiveFileName, archivedIds, appendArchiveLines, listArchive } from './archive/directory.js'
export * from './watch.js'
export * from './archive.js'
export * from './blobs/index.js'
export { runAs, currentActor } from './actor.js'
