/**
 * Tool failures: a machine-readable code, and a message that says what was wrong and what to
 * do — with the tool to call next, which the store's own messages (read by REST clients too)
 * do not name.
 */
import { z } from 'zod'
import { ERROR_CODES, MarginaliaError, ValidationError } from '../store/errors.js'

export const TOOL_ERROR_CODES = [...ERROR_CODES, 'UNKNOWN_TOOL', 'CANCELLED'] as const
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number]

/** A failed tool call: the code, a message saying what to do, and details (the invalid fields …) when there are any. */
export interface ToolError {
  code: ToolErrorCode
  message: string
  details?: Record<string, unknown>
}

/** Any thrown value → a ToolError with the right code. */
export function toToolError(thrown: unknown): ToolError {
  if (thrown instanceof MarginaliaError) {
    const message = toolMessage(thrown)
    return thrown.details ? { code: thrown.code, message, details: { ...thrown.details } } : { code: thrown.code, message }
  }
  if (thrown instanceof z.ZodError) return toToolError(ValidationError.fromZod(thrown))
  if (thrown instanceof Error && thrown.name === 'AbortError') return { code: 'CANCELLED', message: 'The call was cancelled.' }
  return { code: 'INTERNAL_ERROR', message: `Internal error: ${thrown instanceof Error ? thrown.message : String(thrown)}` }
}

/**
 * A store error as the agent reads it: where the next step is a tool, the message names it
 * (built from the error's details, so it reads the same whatever the store's wording).
 */
function toolMessage(e: MarginaliaError): string {
  const d = e.details ?? {}
  switch (e.code) {
    case 'NOT_FOUND': {
      const id = d.id // clipped by the store already
      if (typeof id !== 'string') return e.message
      if (d.kind === 'session') return `No session with id "${id}" exists (list_sessions shows the existing sessions).`
      if (d.kind === 'annotation') return `No annotation with id "${id}" exists (get_all_pending or get_session shows existing annotations).`
      return e.message
    }
    case 'CURSOR_EXPIRED': {
      const { sinceRev, oldestRev, currentRev } = d
      if (typeof sinceRev !== 'number' || typeof oldestRev !== 'number' || typeof currentRev !== 'number') return e.message
      return (
        `Changes since rev ${sinceRev} are no longer available: the oldest event still kept is rev ${oldestRev}. ` +
        `Take a fresh snapshot (get_all_pending / get_session) and continue from the current rev ${currentRev}.`
      )
    }
    case 'INVALID_TRANSITION': {
      const { action, annotationId, currentStatus } = d
      if (typeof action !== 'string' || typeof annotationId !== 'string' || typeof currentStatus !== 'string') return e.message
      if (currentStatus === 'acknowledged') {
        return `Cannot ${action} ${annotationId}: it is already acknowledged, by you or another agent. If it is yours, go on with resolve, reply or dismiss; otherwise pick another pending annotation.`
      }
      if (currentStatus === 'resolved' || currentStatus === 'dismissed') {
        return `Cannot ${action} ${annotationId}: it is ${currentStatus}, so it is finished; nothing to do — the person can reopen it.`
      }
      return `Cannot ${action} ${annotationId}: it is ${currentStatus}.`
    }
    default:
      return e.message
  }
}
