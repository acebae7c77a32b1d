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
import { MarginaliaError, clipEcho } from './errors.js'
import type { DecideContext, Verdict } from './commands.js'
import { PERMISSION_BEHAVIORS } from './vocabulary.js'
import { permissionState, type PermissionRecord } from './permission-records.js'

export { permissionList, permissionState, type PermissionRecord } from './permission-records.js'

/** How long a request is offered to the person when the agent does not say (Claude Code keeps its prompt open until answered). */
const DEFAULT_PERMISSION_TIMEOUT_MS = 10 * 60_000
const MAX_PERMISSION_TIMEOUT_MS = 24 * 60 * 60_000
export { MAX_PERMISSIONS } from './permission-records.js'

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

