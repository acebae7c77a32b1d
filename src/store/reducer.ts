/**
 * The one pure reducer: (state, event) → state, as an immer `produce`. Commands, start-up
 * replay and other processes' events all go through it, so they cannot disagree.
 */
import { Immer, freeze, type Draft } from 'immer'
import type { Annotation, Session } from './model.js'
import type { StoreEvent } from './events.js'
import { draftDelete, draftGet, draftSet, emptyShards, shardGet, shardsFrom, type Shards } from './shards.js'
import { applyAnnotationEvent, type AnnotationRecords } from './apply.js'

export interface StoreState {
  /** Revision of the last applied event; 0 for an empty store. */
  readonly rev: number
  readonly sessions: Shards<Session>
  readonly annotations: Shards<Annotation>
}

/**
 * A private immer instance, so our settings never leak into an embedder's immer. Auto-freeze is
 * off because immer then re-checks every sibling of every touched container (measured: 3× the
 * cost of the mutation at 100 000 annotations); instead each record is frozen when it is
 * created or changed, so every Session, Annotation and Reply handed out is immutable.
 */
const immer = new Immer({ autoFreeze: false })

export function emptyState(): StoreState {
  return { rev: 0, sessions: emptyShards<Session>(), annotations: emptyShards<Annotation>() }
}

export function stateFrom(rev: number, sessions: Iterable<Session>, annotations: Iterable<Annotation>): StoreState {
  const frozen = <T>(records: Iterable<T>): Generator<T> => mapIter(records, (r) => freeze(r, true))
  return { rev, sessions: shardsFrom(frozen(sessions)), annotations: shardsFrom(frozen(annotations)) }
}

function* mapIter<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item)
}

export class ReplayError extends Error {}

export function applyEvent(state: StoreState, event: StoreEvent): StoreState {
  const next = immer.produce(state, (draft) => {
    reduce(draft, event)
    draft.rev = event.rev
  })
  if (event.type === 'session.created') freeze(shardGet(next.sessions, event.sessionId), true)
  else if (event.type !== 'annotation.deleted' && event.type !== 'annotation.archived') freeze(shardGet(next.annotations, event.annotationId), true)
  return next
}

function reduce(draft: Draft<StoreState>, event: StoreEvent): void {
  if (event.type === 'session.created') {
    draftSet(draft.sessions, event.session.id, { ...event.session, rev: event.rev })
    return
  }
  const records: AnnotationRecords = {
    get: (id) => draftGet<Annotation>(draft.annotations, id) as Annotation | undefined,
    set: (id, annotation) => draftSet(draft.annotations, id, annotation),
    delete: (id) => draftDelete(draft.annotations, id),
  }
  const outcome = applyAnnotationEvent(records, event)
  if (outcome === 'missing') throw new ReplayError(`event rev ${event.rev} (${event.type}) refers to unknown annotation ${event.annotationId}`)
  if (outcome === 'stale') throw new ReplayError(`event rev ${event.rev} (${event.type}) is older than annotation ${event.annotationId} (rev ${records.get(event.annotationId)?.rev})`)
}
