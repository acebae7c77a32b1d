/**
 * The one pure reducer: (state, event) → state, as an immer `produce`. Commands, start-up
 * replay and other processes' events all go through it, so they cannot disagree.
 */
import { Immer, freeze, type Draft } from 'immer'
import type { Annotation, Credential, Identity, Session } from './model.js'
import type { StoreEvent } from './events.js'
import { draftDelete, draftGet, draftSet, emptyShards, shardGet, shardsFrom, type Shards } from './shards.js'
import { applyAnnotationEvent, type AnnotationRecords } from './apply.js'
import { reducePermission, type PermissionRecords } from './permission-records.js'

export interface StoreState {
  /** Revision of the last applied event; 0 for an empty store. */
  readonly rev: number
  readonly sessions: Shards<Session>
  readonly annotations: Shards<Annotation>
  /** People and agents by id, revoked ones included. */
  readonly identities: Readonly<Record<string, Identity>>
  /** Credentials that still work (not used, signed out or revoked; expiry is checked by the reader), by id. */
  readonly credentials: Readonly<Record<string, Credential>>
  /** Recent permission requests an agent relayed, by request id (permissions.ts); absent until the first. */
  readonly permissions?: PermissionRecords
}

/**
 * A private immer instance, so our settings never leak into an embedder's immer. Auto-freeze is
 * off because immer then re-checks every sibling of every touched container (measured: 3× the
 * cost of the mutation at 100 000 annotations); instead each record is frozen when it is
 * created or changed, so every Session, Annotation and Reply handed out is immutable.
 */
const immer = new Immer({ autoFreeze: false })

export function emptyState(): StoreState {
  return { rev: 0, sessions: emptyShards<Session>(), annotations: emptyShards<Annotation>(), identities: {}, credentials: {} }
}

export function stateFrom(
  rev: number,
  sessions: Iterable<Session>,
  annotations: Iterable<Annotation>,
  identities: Iterable<Identity> = [],
  credentials: Iterable<Credential> = [],
): StoreState {
  const frozen = <T>(records: Iterable<T>): Generator<T> => mapIter(records, (r) => freeze(r, true))
  const byId = <T extends { id: string }>(records: Iterable<T>): Record<string, T> => Object.fromEntries([...frozen(records)].map((r) => [r.id, r]))
  return { rev, sessions: shardsFrom(frozen(sessions)), annotations: shardsFrom(frozen(annotations)), identities: byId(identities), credentials: byId(credentials) }
}

function* mapIter<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item)
}

export function applyEvent(state: StoreState, event: StoreEvent): StoreState {
  const next = immer.produce(state, (draft) => {
    reduce(draft, event)
    draft.rev = event.rev
  })
  freezeTouched(next, event)
  return next
}

/**
 * Apply many events in one `produce` (start-up replay, a reload): the same result as applying
 * them one by one, without a copy of every touched shard per event (measured: 14 000 events on
 * 100 000 annotations, ~2.2 s one by one). `onError` turns a reducer error into the caller's
 * error naming the event; nothing is returned then.
 */
export function applyEvents(state: StoreState, events: readonly StoreEvent[], onError: (event: StoreEvent, error: unknown) => Error): StoreState {
  if (events.length === 0) return state
  const next = immer.produce(state, (draft) => {
    for (const event of events) {
      try {
        reduce(draft, event)
      } catch (e) {
        throw onError(event, e)
      }
      draft.rev = event.rev
    }
  })
  for (const event of events) freezeTouched(next, event)
  return next
}

/** Freeze the record an event created or changed (see `immer` above); a removed one is gone. */
function freezeTouched(next: StoreState, event: StoreEvent): void {
  switch (event.type) {
    case 'session.created':
      freeze(shardGet(next.sessions, event.sessionId), true)
      break
    case 'annotation.created':
    case 'annotation.status_changed':
    case 'annotation.replied':
      freeze(shardGet(next.annotations, event.annotationId), true)
      break
    case 'annotation.deleted':
    case 'annotation.archived':
      break
    case 'identity.added':
    case 'identity.revoked':
      freeze(next.identities[event.type === 'identity.added' ? event.identity.id : event.identityId], true)
      break
    case 'credential.issued':
      freeze(next.credentials[event.credential.id], true)
      break
    case 'credential.ended':
    case 'capture.requested':
    case 'permission.requested':
    case 'permission.answered':
      break
    case 'capture.taken':
      if (event.attachTo !== undefined || event.element !== undefined) freeze(shardGet(next.annotations, event.annotationId), true)
      break
    default:
      unknownEvent(event)
  }
}

function reduce(draft: Draft<StoreState>, event: StoreEvent): void {
  switch (event.type) {
    case 'session.created':
      draftSet(draft.sessions, event.session.id, { ...event.session, rev: event.rev })
      return
    case 'annotation.created':
    case 'annotation.status_changed':
    case 'annotation.replied':
    case 'annotation.deleted':
    case 'annotation.archived':
    case 'capture.taken': {
      const records: AnnotationRecords = {
        get: (id) => draftGet<Annotation>(draft.annotations, id) as Annotation | undefined,
        set: (id, annotation) => draftSet(draft.annotations, id, annotation),
        delete: (id) => draftDelete(draft.annotations, id),
      }
      const outcome = applyAnnotationEvent(records, event)
      if (outcome === 'missing') throw new Error(`event rev ${event.rev} (${event.type}) refers to unknown annotation ${event.annotationId}`)
      if (outcome === 'stale') throw new Error(`event rev ${event.rev} (${event.type}) is older than annotation ${event.annotationId} (rev ${records.get(event.annotationId)?.rev})`)
      return
    }
    case 'identity.added':
      draft.identities[event.identity.id] = { ...event.identity }
      return
    case 'identity.revoked': {
      const identity = draft.identities[event.identityId]
      if (!identity) throw new Error(`event rev ${event.rev} (${event.type}) refers to unknown identity ${event.identityId}`)
      identity.revokedAt = event.at
      for (const [id, c] of Object.entries(draft.credentials)) if (c.identityId === event.identityId) delete draft.credentials[id]
      return
    }
    case 'credential.issued':
      // Only the stored log has the hash; a credential without one (a public copy) never works.
      if ('hash' in event.credential) draft.credentials[event.credential.id] = { ...event.credential }
      return
    case 'credential.ended':
      delete draft.credentials[event.credentialId]
      return
    case 'capture.requested':
      // A request travels between processes; no record changes.
      return
    case 'permission.requested':
    case 'permission.answered':
      reducePermission(draft, event)
      return
    default:
      unknownEvent(event)
  }
}

/** A new event kind must be handled above: this does not compile until it is. */
function unknownEvent(event: never): never {
  throw new Error(`unknown event type ${JSON.stringify((event as { type?: unknown }).type)}`)
}
