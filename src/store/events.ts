/**
 * Store events: every successful mutation is exactly one event with the next `rev`.
 * Events carry everything needed to replay them, so the same reducer serves commands,
 * start-up replay and changes made by other processes.
 */
import type { Actor, Annotation, AnnotationStatus, Attachment, Credential, ElementInfo, Identity, Reply, Session } from './model.js'
import { ANNOTATION_STATUSES, AUTHORS, CAPTURE_ANCHORS, REPLY_CHANNELS, CREDENTIAL_END_REASONS, CREDENTIAL_KINDS, IDENTITY_KINDS, PERMISSION_BEHAVIORS, ROLES, STORE_EVENT_TYPES, type StoreEventType } from './vocabulary.js'
import type { StatusAction } from './machine.js'

interface EventBase {
  /** The store revision this event produced (1, 2, 3 … with no gaps). */
  rev: number
  /** When it happened (ISO-8601 UTC). */
  at: string
  /** The annotation session it belongs to; empty for events about identities. */
  sessionId: string
  /** Who made the change, when known (a signed-in person or an agent with a token). */
  by?: Actor
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
  /** A browser showing the page adds a picture of the element now to `reply`, as its "after" (a `capture.taken` with `attachTo`). */
  after?: true
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
  /** Where in the archive it went, as the adapter's archive names it (the file adapter: the file, relative to the archive directory). */
  archiveFile: string
}

/** A person or an agent was added. */
export interface IdentityAddedEvent extends EventBase {
  type: 'identity.added'
  identity: Identity
}

/** A person or an agent lost access: every credential of theirs stops working at once. */
export interface IdentityRevokedEvent extends EventBase {
  type: 'identity.revoked'
  identityId: string
}

/**
 * A credential was issued. `credential.hash` is in the stored log only: events handed out
 * (`changes$`, `changesSince`, the event stream) are `publicEvent`s, without it.
 */
export interface CredentialIssuedEvent extends EventBase {
  type: 'credential.issued'
  credential: PublicCredential | Credential
}

/** A credential stopped working: a sign-in code used, a session signed out. */
export interface CredentialEndedEvent extends EventBase {
  type: 'credential.ended'
  credentialId: string
  identityId: string
  reason: (typeof CREDENTIAL_END_REASONS)[number]
}

/**
 * An agent asked for a picture of an annotation's element as it is now. A browser showing the
 * annotation's page (its overlay hears this on the session's event stream) takes it and answers
 * with `capture.taken`. Changes no record.
 */
export interface CaptureRequestedEvent extends EventBase {
  type: 'capture.requested'
  annotationId: string
  /** Names the request: the answer carries it. */
  requestId: string
  /** The page to show it on (the annotation's page, else its session's). */
  url: string
  /** After this instant nobody waits for the answer: a browser that hears the request later (a replay) leaves it. */
  expiresAt: string
  /**
   * A one-time secret the answer must carry: the browser page that heard this request on its
   * session's stream holds it, a caller that only knows the request's id does not. (Absent from
   * requests written before it existed: those are long expired.)
   */
  token?: string
}

/**
 * A browser took a picture of an annotation's element: for a `capture.requested` (the waiting agent
 * takes it from here; no record changes), as the "after" of a resolve that asked for one
 * (`attachTo`), or anchoring an annotation an agent filed (`element`).
 */
export interface CaptureTakenEvent extends EventBase {
  type: 'capture.taken'
  annotationId: string
  requestId: string
  /** The picture (its bytes in the blob store). */
  attachment: Attachment
  /** The page the browser showed. */
  url: string
  /** Where the element was: as anchored (`found`), found elsewhere by its fingerprint (`moved`), or not at all (`missing`: the picture shows the viewport). */
  anchor: (typeof CAPTURE_ANCHORS)[number]
  /** When the browser took it (its clock, ISO-8601). */
  capturedAt: string
  /** The reply the picture goes on as its `after` attachment (a resolve's summary that asked for one). Without it no record changes. */
  attachTo?: string
  /**
   * The element as the browser found it (fingerprint, label, box …), for an annotation an agent
   * filed by selector: it becomes the annotation's element, and the picture its screenshot.
   */
  element?: ElementInfo
}

/**
 * An agent asked whether it may run a tool (Claude Code's permission prompt, relayed by the
 * channel of `marginalia mcp`). The overlay and the inbox show it to the person, who may answer
 * with `permission.answered`; the terminal keeps its own prompt, and the first answer wins there.
 * Not tied to an annotation: `sessionId` is empty.
 */
export interface PermissionRequestedEvent extends EventBase {
  type: 'permission.requested'
  /** The agent's id for the prompt (Claude Code: five lowercase letters); the answer names it. */
  requestId: string
  /** The tool the agent wants to run (`Bash`, `Write`, …). */
  toolName: string
  /** What the call does, as the agent describes it. */
  description: string
  /** The start of the call's input (a command line, a file path), as the agent sent it. */
  inputPreview: string
  /** Which agent asks (its MCP client name), when known. */
  agent?: string
  /** After this instant the request is no longer offered for an answer. */
  expiresAt: string
}

/** A person answered a permission request from the page: `marginalia mcp` sends it to the agent. */
export interface PermissionAnsweredEvent extends EventBase {
  type: 'permission.answered'
  /** The request answered (its `permission.requested`'s `requestId`). */
  requestId: string
  /** `allow`: the agent runs the tool; `deny`: it does not. Its `by` names the person. */
  behavior: (typeof PERMISSION_BEHAVIORS)[number]
}

export type PublicCredential = Omit<Credential, 'hash'>

export type StoreEvent =
  | IdentityAddedEvent
  | IdentityRevokedEvent
  | CredentialIssuedEvent
  | CredentialEndedEvent
  | SessionCreatedEvent
  | AnnotationCreatedEvent
  | AnnotationStatusChangedEvent
  | AnnotationRepliedEvent
  | AnnotationDeletedEvent
  | AnnotationArchivedEvent
  | CaptureRequestedEvent
  | CaptureTakenEvent
  | PermissionRequestedEvent
  | PermissionAnsweredEvent

export { STORE_EVENT_TYPES, type StoreEventType }

/** Compile-time check: the union above and the declared list name exactly the same kinds. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const _sameKinds: Same<StoreEvent['type'], StoreEventType> = true
void _sameKinds

/** An event before the store stamps it with `rev` and `at`. */
export type EventDraft = StoreEvent extends infer E ? (E extends StoreEvent ? Omit<E, 'rev' | 'at'> : never) : never

/**
 * Whether a value read from storage is an event the reducer can apply: the common fields and
 * every field its type needs. A damaged line can still be valid JSON; it must be refused here,
 * by name, rather than fail later inside the reducer.
 */
export function isStoreEvent(value: unknown): value is StoreEvent {
  if (!isObject(value)) return false
  const v = value
  if (!(typeof v.rev === 'number' && Number.isInteger(v.rev) && typeof v.at === 'string' && typeof v.sessionId === 'string')) return false
  if (!(STORE_EVENT_TYPES as readonly unknown[]).includes(v.type)) return false
  const type = v.type as StoreEventType
  switch (type) {
    case 'session.created':
      return isObject(v.session) && v.session.id === v.sessionId && typeof v.session.url === 'string' && typeof v.session.createdAt === 'string'
    case 'annotation.created': {
      const a = v.annotation
      return (
        typeof v.annotationId === 'string' &&
        isObject(a) &&
        a.id === v.annotationId &&
        a.sessionId === v.sessionId &&
        isStatus(a.status) &&
        typeof a.comment === 'string' &&
        typeof a.createdAt === 'string' &&
        Array.isArray(a.replies) &&
        a.replies.every(isReply)
      )
    }
    case 'annotation.status_changed':
      return typeof v.annotationId === 'string' && typeof v.action === 'string' && isStatus(v.from) && isStatus(v.to) && (v.reply === undefined || isReply(v.reply))
    case 'annotation.replied':
      return typeof v.annotationId === 'string' && isReply(v.reply)
    case 'annotation.deleted':
      return typeof v.annotationId === 'string' && isStatus(v.from)
    case 'annotation.archived':
      return typeof v.annotationId === 'string' && isStatus(v.from) && typeof v.archiveFile === 'string'
    case 'identity.added': {
      const i = v.identity
      return isObject(i) && typeof i.id === 'string' && typeof i.name === 'string' && isOneOf(i.kind, IDENTITY_KINDS) && isOneOf(i.role, ROLES) && typeof i.createdAt === 'string'
    }
    case 'identity.revoked':
      return typeof v.identityId === 'string'
    case 'credential.issued': {
      const c = v.credential
      return isObject(c) && typeof c.id === 'string' && typeof c.identityId === 'string' && isOneOf(c.kind, CREDENTIAL_KINDS) && typeof c.createdAt === 'string'
    }
    case 'credential.ended':
      return typeof v.credentialId === 'string' && typeof v.identityId === 'string' && isOneOf(v.reason, CREDENTIAL_END_REASONS)
    case 'capture.requested':
      return typeof v.annotationId === 'string' && typeof v.requestId === 'string' && typeof v.url === 'string' && typeof v.expiresAt === 'string' && (v.token === undefined || typeof v.token === 'string')
    case 'capture.taken':
      return typeof v.annotationId === 'string' && typeof v.requestId === 'string' && isObject(v.attachment) && typeof v.attachment.sha256 === 'string' && typeof v.url === 'string' && isOneOf(v.anchor, CAPTURE_ANCHORS) && typeof v.capturedAt === 'string'
    case 'permission.requested':
      return typeof v.requestId === 'string' && typeof v.toolName === 'string' && typeof v.description === 'string' && typeof v.inputPreview === 'string' && typeof v.expiresAt === 'string' && (v.agent === undefined || typeof v.agent === 'string')
    case 'permission.answered':
      return typeof v.requestId === 'string' && isOneOf(v.behavior, PERMISSION_BEHAVIORS)
    default: {
      // A kind in STORE_EVENT_TYPES without a case here does not compile.
      const unknown: never = type
      return unknown
    }
  }
}

/**
 * The event as it may be handed out: a credential's hash stays in the stored log and the state.
 * Everything that publishes events (`changes$`, `changesSince`, the SSE stream, the MCP
 * `changes` tools) sees only these.
 */
export function publicEvent(event: StoreEvent): StoreEvent {
  if (event.type !== 'credential.issued' || !('hash' in event.credential)) return event
  const { hash: _hash, ...credential } = event.credential
  return { ...event, credential }
}

/**
 * Whether an event is an agent's permission request or a person's answer to one: what only those
 * who may answer (a person, an admin, the operator, local use) see on event streams and in the
 * changes tools — an agent reads neither its own nor another agent's prompts.
 */
export function isPermissionEvent(event: StoreEvent): event is PermissionRequestedEvent | PermissionAnsweredEvent {
  return event.type === 'permission.requested' || event.type === 'permission.answered'
}

/** Whether an event is about identities (no annotation session): what only admins see on event streams. */
export function isIdentityEvent(event: StoreEvent): event is IdentityAddedEvent | IdentityRevokedEvent | CredentialIssuedEvent | CredentialEndedEvent {
  return event.type === 'identity.added' || event.type === 'identity.revoked' || event.type === 'credential.issued' || event.type === 'credential.ended'
}

function isOneOf(value: unknown, list: readonly string[]): boolean {
  return typeof value === 'string' && list.includes(value)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isStatus(value: unknown): value is AnnotationStatus {
  return (ANNOTATION_STATUSES as readonly unknown[]).includes(value)
}

function isReply(value: unknown): value is Reply {
  if (!isObject(value) || typeof value.id !== 'string' || !(AUTHORS as readonly unknown[]).includes(value.author) || typeof value.message !== 'string' || typeof value.createdAt !== 'string') return false
  // A reply through the agent's host is the agent's: a line claiming it as the person's is refused.
  return value.via === undefined || ((REPLY_CHANNELS as readonly unknown[]).includes(value.via) && value.author === 'agent')
}
