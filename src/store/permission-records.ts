/**
 * The permission requests the store keeps (`state.permissions`) and how their events change them:
 * the reducer's part of permissions.ts, apart so the reducer needs nothing of the commands.
 */
import type { Draft } from 'immer'
import type { Actor } from './model.js'
import type { PermissionAnsweredEvent, PermissionRequestedEvent } from './events.js'
import type { PERMISSION_BEHAVIORS } from './vocabulary.js'

/** At most this many requests are kept (the oldest dropped first); a request is dropped an hour after it expired. */
export const MAX_PERMISSIONS = 200
const KEEP_AFTER_EXPIRY_MS = 60 * 60_000

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
