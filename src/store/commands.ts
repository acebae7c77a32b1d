/**
 * What each command decides: given the state it runs against, the instant and its validated
 * input, which events happen and what the caller gets back once they are applied. Pure: no
 * I/O, no clock, ids from `newId`. A refusal is a thrown typed error, and then nothing happens.
 */
import type { z } from 'zod'
import { normalizeSource, type SourceLocation } from './source-location.js'
import type { AddAnnotationInput, AddIdentityInput, CreateSessionInput, DeleteInput, NewCredentialInput, ReplyInput } from './model.js'
import type { Actor, Annotation, Author, ElementInfo, Credential, Identity, Reply, ReplyChannel, Session } from './model.js'
import { ConflictError, CredentialError, NotFoundError, ValidationError } from './errors.js'
import { transition, type StatusAction } from './machine.js'
import type { EventDraft } from './events.js'
import type { StoreState } from './reducer.js'
import type { IdKind } from './ids.js'
import { orderKey } from './indexes.js'
import { openQuestionOf } from './questions.js'
import { shardGet, shardValues } from './shards.js'
import type { ArchiveResult, ArchiveWrite } from './archive.js'

/** A command's decision: its events (not yet stamped with rev and time) and its result. */
export interface Verdict<T> {
  drafts: EventDraft[]
  /** The caller's result, given the state after the events. */
  result: (after: StoreState) => T
}

export interface DecideContext {
  /** The state the command runs against: the current one, plus earlier commands of its batch. */
  state: StoreState
  /** The command's instant (ISO-8601). */
  now: string
  newId: (kind: IdKind) => string
  /** Who runs the command, when known: stamped on the new records (and, by the store, on its events). */
  by?: Actor | undefined
}

export function createSession({ now, newId }: DecideContext, args: z.output<typeof CreateSessionInput>): Verdict<Session> {
  const session: Session = { id: newId('session'), url: args.url, createdAt: now, updatedAt: now, rev: 0 }
  if (args.name !== undefined) session.name = args.name
  return {
    drafts: [{ type: 'session.created', sessionId: session.id, session }],
    result: (after) => shardGet(after.sessions, session.id)!,
  }
}

export function addAnnotation({ state, now, newId, by }: DecideContext, args: z.output<typeof AddAnnotationInput>, author?: 'agent'): Verdict<Annotation> {
  if (!shardGet(state.sessions, args.sessionId)) throw new NotFoundError('session', args.sessionId)
  const { sessionId, comment, ...optional } = args
  const annotation: Annotation = {
    id: newId('annotation'),
    sessionId,
    status: 'pending',
    comment,
    ...(JSON.parse(JSON.stringify(optional)) as Partial<Annotation>),
    ...(optional.source ? { source: normalizeSource(JSON.parse(JSON.stringify(optional.source)) as SourceLocation) } : {}),
    replies: [],
    ...(by ? { by: { ...by } } : {}),
    ...(author ? { author } : {}),
    createdAt: now,
    updatedAt: now,
    rev: 0,
  }
  return {
    drafts: [{ type: 'annotation.created', sessionId, annotationId: annotation.id, annotation }],
    result: (after) => shardGet(after.annotations, annotation.id)!,
  }
}

/** The message a status change carries, who wrote it, and the channel it came through (see REPLY_CHANNELS). */
export interface StatusMessage {
  author: Author
  text: string | undefined
  after?: boolean | undefined
  via?: ReplyChannel | undefined
}

/** A reply through the agent's host is the agent's, whatever author the caller named: refused as the person's. */
function authorThrough(author: Author, via: ReplyChannel | undefined): Author {
  if (via !== undefined && author !== 'agent') throw new ValidationError([{ path: 'author', message: `a reply through the agent's ${via} is the agent's (author "agent"), never the person's` }])
  return author
}

/** A status change by the table; a message that comes with it becomes a reply in the same event. */
export function changeStatus(
  { state, now, newId, by }: DecideContext,
  action: StatusAction,
  id: string,
  expectedRev: number | undefined,
  message: StatusMessage,
): Verdict<Annotation> {
  const current = mustGetFrom(state, id, expectedRev)
  const to = transition(action, id, current.status)
  const draft: EventDraft = { type: 'annotation.status_changed', sessionId: current.sessionId, annotationId: id, action, from: current.status, to }
  if (message.text !== undefined) {
    draft.reply = { id: newId('reply'), author: authorThrough(message.author, message.via), ...(by ? { by: { ...by } } : {}), ...(message.via ? { via: message.via } : {}), message: message.text, createdAt: now }
  }
  if (message.after && draft.reply) draft.after = true
  return { drafts: [draft], result: (after) => shardGet(after.annotations, id)! }
}

/** Questions an agent may ask on one thread before the person answers (`ask`: "never ask twice"). */
const MAX_UNANSWERED_PER_THREAD = 10
/** Threads on which one agent (one identity; every agent alike without sign-in) may wait for an answer at once. */
const MAX_OPEN_QUESTIONS_PER_AGENT = 100

/**
 * Refuse a question over the limits: one agent's questions cannot bury a thread or the person's
 * list of open questions. Answered questions do not count; the person's reply resets a thread.
 */
function checkQuestionRoom(state: StoreState, current: Annotation, by: Actor | undefined): void {
  let unanswered = 0
  for (let i = current.replies.length - 1; i >= 0 && current.replies[i]!.author !== 'human'; i--) if (current.replies[i]!.kind === 'question') unanswered++
  if (unanswered >= MAX_UNANSWERED_PER_THREAD) {
    throw new ValidationError([{ path: 'question', message: `annotation ${current.id} already has ${unanswered} unanswered questions (the limit per thread is ${MAX_UNANSWERED_PER_THREAD}); wait for the person's answer with await_reply instead of asking again` }])
  }
  if (unanswered > 0 && openQuestionOf(current)?.by?.id === by?.id) return // this agent already waits here: no new thread counted
  let open = 0
  for (const a of shardValues(state.annotations)) {
    const q = a.id === current.id ? undefined : openQuestionOf(a)
    if (q && q.by?.id === by?.id) open++
  }
  if (open >= MAX_OPEN_QUESTIONS_PER_AGENT) {
    const who = by ? `${by.name} has` : 'the agents have'
    throw new ValidationError([{ path: 'question', message: `${who} ${open} open questions the person has not answered (the limit per agent is ${MAX_OPEN_QUESTIONS_PER_AGENT}); wait for answers (await_reply, get_all_pending) before asking more` }])
  }
}

export function reply({ state, now, newId, by }: DecideContext, id: string, args: z.output<typeof ReplyInput>): Verdict<Annotation> {
  const current = mustGetFrom(state, id, args.expectedRev)
  if (args.kind === 'question') checkQuestionRoom(state, current, by)
  const reply: Reply = { id: newId('reply'), author: authorThrough(args.author, args.via), ...(by ? { by: { ...by } } : {}), ...(args.via ? { via: args.via } : {}), message: args.message, createdAt: now }
  if (args.kind !== undefined) reply.kind = args.kind
  if (args.point && args.kind === 'question') reply.point = true
  if (args.element !== undefined) reply.element = JSON.parse(JSON.stringify(args.element)) as ElementInfo
  if (args.source !== undefined) reply.source = normalizeSource(JSON.parse(JSON.stringify(args.source)) as SourceLocation)
  if (args.attachments !== undefined && args.attachments.length > 0) reply.attachments = args.attachments
  return {
    drafts: [{ type: 'annotation.replied', sessionId: current.sessionId, annotationId: id, reply }],
    result: (after) => shardGet(after.annotations, id)!,
  }
}

/** Resolves to the annotation as it was. */
export function deleteAnnotation({ state }: DecideContext, id: string, args: z.output<typeof DeleteInput>): Verdict<Annotation> {
  const current = mustGetFrom(state, id, args.expectedRev)
  return {
    drafts: [{ type: 'annotation.deleted', sessionId: current.sessionId, annotationId: id, from: current.status }],
    result: () => current,
  }
}

/** Finished annotations (resolved, dismissed) last changed before `cutoff` (of `ids` when given), oldest first, ties by id. */
export function dueForArchive(state: StoreState, cutoff: string, ids?: readonly string[]): Annotation[] {
  const due: Annotation[] = []
  const only = ids ? new Set(ids) : undefined
  for (const a of shardValues(state.annotations)) {
    if ((a.status === 'resolved' || a.status === 'dismissed') && a.updatedAt < cutoff && (!only || only.has(a.id))) due.push(a)
  }
  return due.sort((a, b) => (orderKey(a) < orderKey(b) ? -1 : 1))
}

/** The annotations the archive now keeps leave the store, one `annotation.archived` event each. */
export function archive(due: readonly Annotation[], kept: ArchiveWrite): Verdict<ArchiveResult> {
  const result: ArchiveResult = { archived: due.length, completedEarlierRun: due.length - kept.written, ids: due.map((a) => a.id) }
  if (kept.file !== undefined) result.file = kept.file
  return {
    drafts: due.map((a) => ({ type: 'annotation.archived' as const, sessionId: a.sessionId, annotationId: a.id, from: a.status, archiveFile: kept.place })),
    result: () => result,
  }
}

/** Every annotation leaves the store in one transaction, one `annotation.deleted` event each, oldest first (`marginalia reset`). */
export function clearAnnotations(state: StoreState): Verdict<{ deleted: number; ids: string[] }> {
  const all = [...shardValues(state.annotations)].sort((a, b) => (orderKey(a) < orderKey(b) ? -1 : 1))
  return {
    drafts: all.map((a) => ({ type: 'annotation.deleted' as const, sessionId: a.sessionId, annotationId: a.id, from: a.status })),
    result: () => ({ deleted: all.length, ids: all.map((a) => a.id) }),
  }
}

// ---- identities ---------------------------------------------------------------------------------

/** The result of adding an identity: it, and the id of the credential issued with it (if any). */
export interface IdentityResult {
  identity: Identity
  credentialId?: string
}

/** Add a person or an agent, with a first credential (a sign-in code, a token) when given. Names are unique among identities not revoked. */
export function addIdentity({ state, now, newId }: DecideContext, args: z.output<typeof AddIdentityInput>, credential: z.output<typeof NewCredentialInput> | undefined): Verdict<IdentityResult> {
  const name = args.name.trim()
  const role = args.role ?? args.kind
  if (args.kind === 'agent' && role !== 'agent') throw new ValidationError([{ path: 'role', message: 'an agent has the role agent (people can be admins)' }])
  if (args.kind === 'person' && role === 'agent') throw new ValidationError([{ path: 'role', message: 'a person has the role person or admin' }])
  const taken = Object.values(state.identities).find((i) => i.revokedAt === undefined && i.name.toLowerCase() === name.toLowerCase())
  if (taken) throw new ValidationError([{ path: 'name', message: `"${name}" is already the name of ${taken.kind} ${taken.id}; choose another name, or revoke that one first` }])
  const identity: Identity = { id: newId('identity'), name, kind: args.kind, role, createdAt: now }
  const drafts: EventDraft[] = [{ type: 'identity.added', sessionId: '', identity }]
  if (credential) drafts.push({ type: 'credential.issued', sessionId: '', credential: credentialRecord(identity.id, credential, now) })
  return {
    drafts,
    result: (after) => ({ identity: after.identities[identity.id]!, ...(credential ? { credentialId: credential.id } : {}) }),
  }
}

/** Issue one more credential to an identity that is not revoked. */
export function issueCredential({ state, now }: DecideContext, identityId: string, credential: z.output<typeof NewCredentialInput>): Verdict<Credential> {
  mustBeActive(state, identityId)
  if (state.credentials[credential.id]) throw new ValidationError([{ path: 'id', message: 'a credential with this id exists' }])
  if (credential.parentId !== undefined && state.credentials[credential.parentId]?.identityId !== identityId) throw new CredentialError('The session this one would come from has ended. Sign in again.')
  return {
    drafts: [{ type: 'credential.issued', sessionId: '', credential: credentialRecord(identityId, credential, now) }],
    result: (after) => after.credentials[credential.id]!,
  }
}

/**
 * Use a one-time sign-in code: it ends (used) and a session credential starts, in one
 * transaction, so two exchanges of one code cannot both succeed. The caller checked the secret.
 */
export function redeemSignIn({ state, now }: DecideContext, signInId: string, session: z.output<typeof NewCredentialInput>): Verdict<{ identity: Identity; credential: Credential }> {
  const code = state.credentials[signInId]
  if (!code || code.kind !== 'sign_in' || (code.expiresAt !== undefined && code.expiresAt <= now)) throw new CredentialError('This sign-in link was used already, has expired or was revoked. Ask for a new one.')
  const identity = mustBeActive(state, code.identityId)
  return {
    drafts: [
      { type: 'credential.ended', sessionId: '', credentialId: signInId, identityId: identity.id, reason: 'used' },
      { type: 'credential.issued', sessionId: '', credential: credentialRecord(identity.id, session, now) },
    ],
    result: (after) => ({ identity: after.identities[identity.id]!, credential: after.credentials[session.id]! }),
  }
}

/**
 * End a credential (sign out). Signing out ends the whole sign-in: the session redeemed from the
 * link and every session minted from it. Ending one that is gone already is a no-op.
 */
export function endCredential({ state }: DecideContext, credentialId: string, reason: 'used' | 'signed_out'): Verdict<boolean> {
  const c = state.credentials[credentialId]
  if (!c) return { drafts: [], result: () => false }
  const root = reason === 'signed_out' ? (c.parentId ?? c.id) : c.id
  const chain = Object.values(state.credentials).filter((other) => other.id === root || (reason === 'signed_out' && other.parentId === root))
  if (!chain.some((other) => other.id === c.id)) chain.push(c)
  return { drafts: chain.map((other) => ({ type: 'credential.ended' as const, sessionId: '', credentialId: other.id, identityId: other.identityId, reason })), result: () => true }
}

/** Revoke a person or an agent: all their credentials stop working. Revoking one already revoked is refused. */
export function revokeIdentity({ state }: DecideContext, identityId: string): Verdict<Identity> {
  const identity = mustBeActive(state, identityId)
  return { drafts: [{ type: 'identity.revoked', sessionId: '', identityId: identity.id }], result: (after) => after.identities[identity.id]! }
}

function credentialRecord(identityId: string, c: z.output<typeof NewCredentialInput>, now: string): Credential {
  return {
    id: c.id,
    identityId,
    kind: c.kind,
    hash: c.hash,
    createdAt: now,
    ...(c.expiresAt !== undefined ? { expiresAt: c.expiresAt } : {}),
    ...(c.parentId !== undefined ? { parentId: c.parentId } : {}),
    ...(c.origin !== undefined ? { origin: c.origin } : {}),
  }
}

function mustBeActive(state: StoreState, identityId: string): Identity {
  const identity = state.identities[identityId]
  if (!identity) throw new NotFoundError('identity', identityId)
  if (identity.revokedAt !== undefined) throw new CredentialError(`${identity.name} (${identity.id}) was revoked at ${identity.revokedAt}.`)
  return identity
}

function mustGetFrom(state: StoreState, id: string, expectedRev: number | undefined): Annotation {
  if (typeof id !== 'string' || id.length === 0) throw new ValidationError([{ path: 'id', message: 'must be a non-empty string' }])
  const current = shardGet(state.annotations, id)
  if (!current) throw new NotFoundError('annotation', id)
  if (expectedRev !== undefined && expectedRev !== current.rev) throw new ConflictError(id, expectedRev, current.rev, current.status)
  return current
}
