/**
 * Permission requests an agent relays to the person (Claude Code's channel permission relay):
 * `marginalia mcp` writes the request it got from Claude Code (`permission.requested`), the page
 * the person uses shows it, and the person's answer (`permission.answered`) travels back through
 * the store to the `marginalia mcp` process of that agent, which sends it on. Both are store
 * events, so the agent's process and the person's server may be different processes on one store
 * (a file's watcher, PostgreSQL's LISTEN/NOTIFY carry them).
 *
 * The store keeps the recent requests in memory (`state.permissions`), enough to refuse a second
 * answer and an answer after the request expired. They are short-lived: a snapshot does not carry
 * them (a request written before the last snapshot is gone after a restart; the terminal prompt
 * stays where the agent shows it).
 */
import { z } from 'zod'
import type { Draft } from 'immer'
import type { Actor } from './model.js'
import { MarginaliaError, clipEcho } from './errors.js'
import type { PermissionAnsweredEvent, PermissionRequestedEvent } from './events.js'
import type { DecideContext, Verdict } from './commands.js'
import { PERMISSION_BEHAVIORS } from './vocabulary.js'

/** How long a request is offered to the person when the agent does not say (Claude Code keeps its prompt open until answered). */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 10 * 60_000
export const MAX_PERMISSION_TIMEOUT_MS = 24 * 60 * 60_000
/** At most this many requests are kept (the oldest dropped first); a request is dropped an hour after it expired. */
export const MAX_PERMISSIONS = 200
const KEEP_AFTER_EXPIRY_MS = 60 * 60_000

/** Field limits: the tool's name, the agent's description, the input's preview. */
export const PERMISSION_LIMITS = { requestId: 64, toolName: 200, description: 2_000, inputPreview: 2_000, agent: 200 } as const

export const PermissionRequestInput = z.strictObject({
  requestId: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or - (Claude Code sends five lowercase letters)')
    .max(PERMISSION_LIMITS.requestId),
  toolName: z.string().trim().min(1, 'must name the tool').max(PERMISSION_LIMITS.toolName),
  description: z.string().max(PERMISSION_LIMITS.description),
  inputPreview: z.string().max(PERMISSION_LIMITS.inputPreview),
  agent: z.string().trim().min(1).max(PERMISSION_LIMITS.agent).optional(),
  timeoutMs: z.number().int().min(1).max(MAX_PERMISSION_TIMEOUT_MS).optional(),
})
export type PermissionRequestInput = z.input<typeof PermissionRequestInput>

export const PermissionAnswerInput = z.strictObject({
  behavior: z.enum(PERMISSION_BEHAVIORS, { error: 'must be "allow" or "deny"' }),
})
export type PermissionAnswerInput = z.input<typeof PermissionAnswerInput>

/** A request as the store keeps it and the REST API shows it. */
export interface PermissionRecord {
  requestId: string
  toolName: string
  description: string
  inputPreview: string
  agent?: string
  requestedAt: string
  expiresAt: string
  /** The person's answer, once given. */
  answer?: { behavior: (typeof PERMISSION_BEHAVIORS)[number]; at: string; by?: Actor }
}

export type PermissionRecords = Readonly<Record<string, PermissionRecord>>

/** Where a request stands at `now`: waiting for the person, answered, or expired unanswered. */
export function permissionState(record: PermissionRecord, now: string): 'open' | 'answered' | 'expired' {
  if (record.answer) return 'answered'
  return Date.parse(record.expiresAt) <= Date.parse(now) ? 'expired' : 'open'
}

export function requestPermission({ state, now }: DecideContext, args: z.output<typeof PermissionRequestInput>): Verdict<PermissionRecord> {
  const existing = state.permissions?.[args.requestId]
  // The same request sent twice (a reconnect) is the same request: nothing new is written.
  if (existing && existing.toolName === args.toolName && existing.inputPreview === args.inputPreview && permissionState(existing, now) === 'open') {
    return { drafts: [], result: () => existing }
  }
  const expiresAt = new Date(Date.parse(now) + (args.timeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS)).toISOString()
  const { timeoutMs: _timeout, ...fields } = args
  return {
    drafts: [{ type: 'permission.requested', sessionId: '', ...fields, expiresAt }],
    result: (after) => after.permissions![args.requestId]!,
  }
}

export function answerPermission({ state, now }: DecideContext, requestId: string, args: z.output<typeof PermissionAnswerInput>): Verdict<PermissionRecord> {
  const record = state.permissions?.[requestId]
  if (!record) throw new MarginaliaError('NOT_FOUND', `No permission request "${clipEcho(requestId)}" is waiting: the agent never sent it, or it is older than the server's last start.`, { requestId: clipEcho(requestId) })
  const where = permissionState(record, now)
  if (where === 'answered') {
    throw new MarginaliaError('CONFLICT', `Permission request "${requestId}" was already answered (${record.answer!.behavior}); an answer is given once.`, { requestId, behavior: record.answer!.behavior })
  }
  if (where === 'expired') {
    throw new MarginaliaError('CONFLICT', `Permission request "${requestId}" expired at ${record.expiresAt}; answer it in the agent's terminal.`, { requestId, expiresAt: record.expiresAt })
  }
  return {
    drafts: [{ type: 'permission.answered', sessionId: '', requestId, behavior: args.behavior }],
    result: (after) => after.permissions![requestId]!,
  }
}

/** The reducer's part: a request is recorded (old ones pruned, deterministically from the event's instant), an answer joins it. */
export function reducePermission(draft: Draft<{ permissions?: PermissionRecords }>, event: PermissionRequestedEvent | PermissionAnsweredEvent): void {
  const records = (draft.permissions ??= {}) as Record<string, PermissionRecord>
  if (event.type === 'permission.answered') {
    const record = records[event.requestId]
    // An answer to a request this state never held (written before the snapshot it loaded) changes nothing.
    if (record && !record.answer) record.answer = { behavior: event.behavior, at: event.at, ...(event.by ? { by: { ...event.by } } : {}) }
    return
  }
  const { requestId, toolName, description, inputPreview, agent, expiresAt } = event
  records[requestId] = { requestId, toolName, description, inputPreview, ...(agent !== undefined ? { agent } : {}), requestedAt: event.at, expiresAt }
  const cutoff = Date.parse(event.at) - KEEP_AFTER_EXPIRY_MS
  for (const [id, r] of Object.entries(records)) if (Date.parse(r.expiresAt) < cutoff) delete records[id]
  const ids = Object.keys(records)
  if (ids.length > MAX_PERMISSIONS) {
    const oldest = ids.sort((a, b) => records[a]!.requestedAt.localeCompare(records[b]!.requestedAt) || a.localeCompare(b))
    for (const id of oldest.slice(0, ids.length - MAX_PERMISSIONS)) delete records[id]
  }
}

/** The requests, oldest first (ties by id). */
export function permissionList(records: PermissionRecords | undefined): PermissionRecord[] {
  return Object.values(records ?? {}).sort((a, b) => a.requestedAt.localeCompare(b.requestedAt) || a.requestId.localeCompare(b.requestId))
}
