/**
 * The persistence contract. The store core applies commands and emits events; an adapter makes
 * events durable and reports events written elsewhere. It knows nothing of the status machine.
 *
 * The file adapter (lowdb snapshot + append-only event log) implements it for one machine; a
 * database adapter (an events table, a row lock, LISTEN/NOTIFY for `watch`) can implement the
 * same four calls without touching the store.
 */
import type { Annotation, Session } from './model.js'
import type { StoreEvent } from './events.js'

/** Everything needed to restore a store: its state at `rev` and the recent event window. */
export interface Snapshot {
  rev: number
  sessions: Session[]
  annotations: Annotation[]
  /** The last events up to `rev`, oldest first, so `changesSince` survives restarts. */
  recentEvents: StoreEvent[]
}

export interface LoadResult {
  /** null for a store that was never written. */
  snapshot: Snapshot | null
  /** Events after `snapshot.rev`, in rev order. */
  events: StoreEvent[]
}

export interface Decision {
  /** New events to append, already stamped with consecutive revs. May be empty. */
  events: StoreEvent[]
  /** The state after those events, for adapters that compact. Called only when needed. */
  snapshot: () => Snapshot
}

export interface StoreAdapter {
  /** Human-readable location, used in messages (a file path, a database URL without secrets). */
  readonly location: string
  /** Read everything once, at open. */
  load(): Promise<LoadResult>
  /**
   * One write transaction with exclusive access across processes: catch up on events written
   * elsewhere since the last sync (handed to `decide` in rev order), let `decide` compute new
   * events against the now-current state, make them durable, release. Resolves only once the
   * events are durable; if it rejects, none of `decide`'s events were written.
   */
  transact(decide: (external: StoreEvent[]) => Decision): Promise<void> | void
  /** Events written elsewhere since the last sync, in rev order (no lock needed). */
  poll(): Promise<StoreEvent[]> | StoreEvent[]
  /** Call `onChange` whenever something may have been written elsewhere. Returns a stop function. */
  watch(onChange: () => void): () => void
  /** Flush and release resources; `snapshot` lets a compacting adapter save a final snapshot. */
  close(snapshot: () => Snapshot): Promise<void>
  /**
   * Release resources without writing anything: what `load` returned could not be made into a
   * store (an event that does not fit the state), so there is nothing to flush or compact.
   */
  dispose?(): Promise<void>
}

/**
 * Keeps nothing anywhere: for tests and embedders that want a throwaway store. It is
 * synchronous, so a memory store emits each event during the command call itself.
 */
export class MemoryAdapter implements StoreAdapter {
  readonly location = 'memory'
  /** Every batch `transact` appended, in order (observable by tests). */
  readonly batches: StoreEvent[][] = []

  constructor(private readonly initial: LoadResult = { snapshot: null, events: [] }) {}

  async load(): Promise<LoadResult> {
    return this.initial
  }

  transact(decide: (external: StoreEvent[]) => Decision): void {
    const { events } = decide([])
    if (events.length > 0) this.batches.push(events)
  }

  poll(): StoreEvent[] {
    return []
  }

  watch(): () => void {
    return () => {}
  }

  async close(): Promise<void> {}
}
