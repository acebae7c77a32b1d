/**
 * Store events: every successful mutation is exactly one event with the next `rev`.
 * Events carry everything needed to replay them, so the same reducer serves commands,
 * start-up replay and changes made by other processes.
 */
import type { Annotation, AnnotationStatus, Reply, Session } from './model.js'
import type { StatusAction } from './machine.js'

interface EventBase {
  /** The store revision this event produced (1, 2, 3 … with no gaps). */
  rev: number
  /** When it happened (ISO-8601 UTC). */
  at: string
  sessionId: string
}

export interface SessionCreatedEvent extends EventBase {
  type: 'session.created'
  session: Session
}

export interface AnnotationCreatedEvent extends EventBase {
  type: 'annotation.created'
  annotationId: string
  annotation: Annotation
}

export interface AnnotationStatusChangedEvent extends EventBase {
  type: 'annotation.status_changed'
  annotationId: string
  action: StatusAction
  from: AnnotationStatus
  to: AnnotationStatus
  /** The message that came with the change (acknowledge message, resolve summary, dismiss reason, reopen note). */
  reply?: Reply
}

export interface AnnotationRepliedEvent extends EventBase {
  type: 'annotation.replied'
  annotationId: string
  reply: Reply
}

export interface AnnotationDeletedEvent extends EventBase {
  type: 'annotation.deleted'
  annotationId: string
  /** The status it had when it was deleted. */
  from: AnnotationStatus
}

/** A finished annotation moved out of the live store into the archive (see `store.archive`). */
export interface AnnotationArchivedEvent extends EventBase {
  type: 'annotation.archived'
  annotationId: string
  from: AnnotationStatus
  /** The archive file it went to, relative to the archive directory. */
  archiveFile: string
}

export type StoreEvent =
  | SessionCreatedEvent
  | AnnotationCreatedEvent
  | AnnotationStatusChangedEvent
  | AnnotationRepliedEvent
  | AnnotationDeletedEvent
  | AnnotationArchivedEvent

export type StoreEventType = StoreEvent['type']
export const STORE_EVENT_TYPES: readonly StoreEventType[] = [
  'session.created',
  'annotation.created',
  'annotation.status_changed',
  'annotation.replied',
  'annotation.deleted',
  'annotation.archived',
]

/** An event before the store stamps it with `rev` and `at`. */
export type EventDraft = StoreEvent extends infer E ? (E extends StoreEvent ? Omit<E, 'rev' | 'at'> : never) : never

export function isStoreEvent(value: unknown): value is StoreEvent {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return (
    typeof v.rev === 'number' &&
    Number.isInteger(v.rev) &&
    typeof v.at === 'string' &&
    typeof v.sessionId === 'string' &&
    (STORE_EVENT_TYPES as readonly unknown[]).includes(v.type)
  )
}
