/**
 * What the store has published: the state, its indexes, the window of recent events, and the
 * streams that announce them. Only `publish` changes it, for events this process committed and
 * for events its adapter read (start-up replay, other processes' writes). Queries read it.
 */
import { BehaviorSubject, Subject } from 'rxjs'
import { publicEvent, type StoreEvent } from './events.js'
import { StoreDataError } from './errors.js'
import { applyEvent, applyEvents, emptyState, stateFrom, type StoreState } from './reducer.js'
import { Indexes } from './indexes.js'
import type { LoadResult, StoreView } from './persistence.js'

export class LiveState {
  readonly changes = new Subject<StoreEvent>()
  /** The state was reloaded from storage (not reached by events): subscribers refetch. */
  readonly resets = new Subject<{ rev: number; reason: string }>()
  readonly states: BehaviorSubject<StoreState>
  indexes: Indexes
  private current: StoreState
  /** Recent events, oldest first: between one and two windows long (trimmed in one go, not per event). */
  private recentEvents: StoreEvent[]

  /** Restore what an adapter loaded. Stored events that do not make a store are a StoreDataError. */
  static restore(loaded: LoadResult, location: string, eventWindow: number): LiveState {
    const snap = loaded.snapshot
    let state = snap ? stateFrom(snap.rev, snap.sessions, snap.annotations, snap.identities, snap.credentials) : emptyState()
    const recent = snap ? snap.recentEvents.filter((e) => e.rev <= snap.rev) : []
    const toApply: StoreEvent[] = []
    let rev = state.rev
    for (const event of loaded.events) {
      if (event.rev <= rev) continue
      if (event.rev !== rev + 1) throw new StoreDataError(location, `the event log jumps from rev ${rev} to ${event.rev}`)
      toApply.push(event)
      rev = event.rev
    }
    // One produce for the whole replay (see applyEvents): start-up cost is the snapshot's, not the log's.
    state = applyEvents(state, toApply, (event, e) => replayError(location, event, e))
    for (const event of toApply.slice(-eventWindow)) recent.push(publicEvent(event))
    return new LiveState(state, recent.slice(-eventWindow), eventWindow)
  }

  private constructor(
    state: StoreState,
    recent: StoreEvent[],
    private readonly eventWindow: number,
  ) {
    this.current = state
    this.recentEvents = recent
    this.indexes = Indexes.build(state)
    this.states = new BehaviorSubject(state)
  }

  get state(): StoreState {
    return this.current
  }

  /** The kept window of recent events, oldest first (do not change it). */
  get recent(): readonly StoreEvent[] {
    return this.recentEvents
  }

  /** Make one event the present: state, indexes, window, then `changes$` (what is handed out has no secret hashes: `publicEvent`). */
  publish(event: StoreEvent, before: StoreState, after: StoreState): void {
    this.current = after
    this.indexes.apply(event, before, after)
    const shown = publicEvent(event)
    this.recentEvents.push(shown)
    if (this.recentEvents.length >= 2 * this.eventWindow) this.recentEvents = this.recentEvents.slice(-this.eventWindow)
    this.changes.next(shown)
  }

  /**
   * Replace everything with what the adapter loaded again (recovery after a refused event):
   * state, indexes and the recent-event window, then `resets` (SSE clients get a `reset` and
   * refetch) and `state$`. Throws a StoreDataError, changing nothing, if it still does not fit.
   */
  reload(loaded: LoadResult, location: string, reason: string): void {
    const fresh = LiveState.restore(loaded, location, this.eventWindow)
    this.current = fresh.current
    this.recentEvents = fresh.recentEvents
    this.indexes = fresh.indexes
    this.resets.next({ rev: this.current.rev, reason })
    this.states.next(this.current)
  }

  /** Emit the current state on `state$` (once per batch of published events). */
  announce(): void {
    this.states.next(this.current)
  }

  /** Publish events the adapter read (written by other processes), skipping those already applied. */
  publishExternal(events: readonly StoreEvent[], location: string): void {
    let changed = false
    for (const event of events) {
      if (event.rev <= this.current.rev) continue
      if (event.rev !== this.current.rev + 1) throw new StoreDataError(location, `expected event rev ${this.current.rev + 1}, found ${event.rev}`)
      const before = this.current
      this.publish(event, before, replay(location, before, event))
      changed = true
    }
    if (changed) this.announce()
  }

  /** The store as it is, or as it will be after `pending` events leading to `state`. */
  view(state: StoreState = this.current, pending: readonly StoreEvent[] = []): StoreView {
    return { state, recentEvents: () => [...this.recentEvents, ...pending.map(publicEvent)].slice(-this.eventWindow) }
  }

  complete(): void {
    this.resets.complete()
    this.changes.complete()
    this.states.complete()
  }
}

/**
 * Apply an event read from storage. One that does not fit the state (it names an annotation
 * that does not exist: a damaged log) is an error naming the store, not a bare reducer error.
 */
function replay(location: string, state: StoreState, event: StoreEvent): StoreState {
  try {
    return applyEvent(state, event)
  } catch (e) {
    throw replayError(location, event, e)
  }
}

function replayError(location: string, event: StoreEvent, e: unknown): StoreDataError {
  return new StoreDataError(location, `event rev ${event.rev} (${event.type}) in its event log cannot be applied: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
}
