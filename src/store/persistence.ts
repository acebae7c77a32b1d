/**
 * The persistence contract: what the store core asks of the place its events live. The core
 * decides events and keeps the state; an adapter makes events durable, reports events other
 * processes wrote, and may keep an archive. An adapter knows nothing of the status machine,
 * and the core knows nothing of files, tables or compaction.
 *
 * One commit, as the store and its adapter see it (the engine is commit.ts):
 *
 *   store                                      adapter
 *   ─────                                      ───────
 *   commands queue up; the first one starts
 *   a batch at once, later ones wait for the
 *   next batch (group commit)
 *   transact(decide) ─────────────────────────▶ take exclusive access across processes
 *                                               (file lock; advisory lock + BEGIN)
 *                                               read the events others wrote since its last
 *                                               read, in rev order
 *                    ◀───────────────────────── await decide(external)
 *   publish `external` on changes$; decide
 *   each command against the now-current
 *   state (a command may first make something
 *   durable that its events point to: the
 *   archive's lines, through `archive()`)
 *   return the Decision ─────────────────────▶ make decision.events durable (append + fsync;
 *                                               INSERT + COMMIT); maybe save a snapshot of
 *                                               snapshotOf(decision); resolve
 *   publish the events on changes$ and
 *   resolve the commands                        release the exclusive access
 *
 * If `transact` rejects, none of the decision's events were written: the store publishes
 * nothing of the batch and rejects its commands. Between commits, `watch` tells the store that
 * something may have been written elsewhere, and the store calls `poll`.
 *
 * The file adapter (file/) implements this for one machine; the PostgreSQL adapter (postgres/)
 * for many, with an events table (rev primary key), an advisory lock for `transact`,
 * LISTEN/NOTIFY for `watch` and a snapshots table for `load`; the memory adapter keeps nothing.
 * The core is the same over all three. Which one a location names is locations.ts's table.
 */
import type { Annotation, Credential, Identity, Session } from './model.js'
import type { StoreEvent } from './events.js'
import type { StoreState } from './reducer.js'
import type { ArchiveSink } from './archive.js'
import { shardValues } from './shards.js'
import type { BlobStore } from './blobs/blob-store.js'

/** Everything needed to restore a store: its state at `rev` and the recent event window. */
export interface Snapshot {
  rev: number
  sessions: Session[]
  annotations: Annotation[]
  /** People and agents; absent when there are none. */
  identities?: Identity[]
  /** Working credentials, hashes only; present with `identities`. */
  credentials?: Credential[]
  /** The last events up to `rev`, oldest first, so `changesSince` survives restarts. */
  recentEvents: StoreEvent[]
}

export interface LoadResult {
  /** null for a store that was never written. */
  snapshot: Snapshot | null
  /** Events after `snapshot.rev`, in rev order. */
  events: StoreEvent[]
}

/** The store as it is (at close) or will be once a decision's events are durable. */
export interface StoreView {
  readonly state: StoreState
  /** The recent events the store keeps for `changesSince`, oldest first, up to `state.rev`. Built on each call. */
  recentEvents(): StoreEvent[]
}

/** What the store decided in one transaction: new events, and the store they lead to. */
export interface Decision extends StoreView {
  /** New events to make durable, already stamped with consecutive revs. May be empty. */
  readonly events: StoreEvent[]
}

/** A snapshot of a view, for adapters that save one (the file adapter, when it compacts its log). */
export function snapshotOf(view: StoreView): Snapshot {
  const { state } = view
  const snapshot: Snapshot = { rev: state.rev, sessions: [...shardValues(state.sessions)], annotations: [...shardValues(state.annotations)], recentEvents: view.recentEvents() }
  const identities = Object.values(state.identities)
  if (identities.length > 0) {
    snapshot.identities = identities
    snapshot.credentials = Object.values(state.credentials)
  }
  return snapshot
}

/** How often an adapter without instant notice looks for other processes' writes, in ms. */
export const DEFAULT_POLL_INTERVAL_MS = 500

export interface StoreAdapter {
  /** Human-readable location, used in messages (a file path, a database URL without secrets). */
  readonly location: string
  /** Read everything once, at open. */
  load(): Promise<LoadResult>
  /**
   * One write transaction with exclusive access across processes: catch up on events written
   * elsewhere since the last read (handed to `decide` in rev order), await `decide`, make its
   * events durable, release. Resolves only once the events are durable; if it rejects, none of
   * `decide`'s events were written. If `decide` rejects, write nothing and reject with its error.
   */
  transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void>
  /** Events written elsewhere since the last read, in rev order (no exclusive access needed). */
  poll(): Promise<StoreEvent[]>
  /**
   * Read-after-write across processes: whether events written elsewhere may be waiting, checked
   * right now and cheaply (the file adapter: one fstat and one stat, microseconds). The store
   * calls it before answering a query (`Store.catchUp()`) and, when true, catches up through
   * `poll` first, so a read that begins after another process's write resolved sees that write.
   * False only when nothing can be new. An adapter without it is polled before every query (a
   * database adapter may do that, or compare a cheap max(rev)); the memory adapter says false.
   */
  mayHaveNews?(): boolean
  /**
   * Call `onChange` whenever something may have been written elsewhere, by whatever means the
   * adapter has (fs.watch and a timer; LISTEN/NOTIFY). An adapter that no other process writes
   * to never calls it. Returns a stop function.
   */
  watch(onChange: () => void): () => void
  /** Flush and release resources; `final` is the store as it is, for an adapter that saves a snapshot on the way out. */
  close(final: StoreView): Promise<void>
  /**
   * Release resources without writing anything: what `load` returned could not be made into a
   * store (an event that does not fit the state), so there is nothing to flush.
   */
  dispose?(): Promise<void>
  /**
   * Where `store.archive()` puts finished annotations. `place` is the caller's choice if it
   * made one (`ArchiveOptions.directory`: a directory for the file adapter), else undefined for
   * the adapter's own. Throws a ValidationError when there is no archive to offer. An adapter
   * without this method cannot archive.
   */
  archive?(place: string | undefined): ArchiveSink
  /**
   * Where this place keeps attachment bytes (the file adapter: `attachments/` beside the store
   * file; PostgreSQL: the schema's `blobs` table), so every process on the store serves every
   * image. Called once, when a store is made over the adapter, unless the caller chose its own
   * (`StoreOptions.blobs`). Without it, attachments are kept in memory: right for an adapter
   * whose events do not outlive the process either, wrong for one whose events do.
   */
  blobStore?(): BlobStore
  /**
   * Forget what was read and read everything again, as `load` does at open: how a process
   * recovers in place after it refused an event it read (once the damaged event was repaired).
   */
  reload?(): Promise<LoadResult>
  /**
   * Everything this place still holds, for `marginalia export`: a snapshot (null when the whole
   * history is kept as events) and the events after it, in rev order. Called on an adapter that
   * was not loaded. Without it, export uses `load()`.
   */
  history?(progress?: Progress): Promise<LoadResult>
  /**
   * Write an imported store into this place, which must hold nothing yet (`marginalia import`):
   * `base` as exported (the snapshot and events after it) and `head`, the state they lead to. An
   * adapter keeps what suits it (the file adapter writes `head` as its snapshot; PostgreSQL keeps
   * the events too). All or nothing; refuses a place that already holds a store.
   */
  restore?(input: RestoreInput, progress?: Progress): Promise<void>
}

/** Progress of a long operation: `done` of `total` items (events, usually). */
export type Progress = (done: number, total: number) => void

export interface RestoreInput {
  base: LoadResult
  head: Snapshot
  /** Runs once the place is known to be empty, before the store is written (the import puts its attachments there). */
  beforeWrite?: () => Promise<void>
}
