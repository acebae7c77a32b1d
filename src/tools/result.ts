/**
 * Tool results. Success: `structuredContent` plus the same JSON as compact text. Failure:
 * `isError` with a message that says what was wrong and what to do, and the machine-readable
 * code in the structured part.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { CursorExpiredError, ERROR_CODES, MarginaliaError, NotFoundError, ValidationError } from '../store/errors.js'

export const TOOL_ERROR_CODES = [...ERROR_CODES, 'UNKNOWN_TOOL', 'CANCELLED'] as const
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number]

export interface ToolError {
  code: ToolErrorCode
  message: string
  details?: Record<string, unknown>
}

export const ToolErrorSchema = z.object({
  code: z.enum(TOOL_ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
})

/** A success: the structured data, and a text part (by default the same JSON, compact). */
export function json(data: Record<string, unknown>, text: string = JSON.stringify(data)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: data }
}

export function error(err: ToolError): CallToolResult {
  const structured: { error: ToolError } = { error: err.details ? { code: err.code, message: err.message, details: err.details } : { code: err.code, message: err.message } }
  return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.message}` }], structuredContent: structured }
}

/** Any thrown value → a ToolError with the right code. */
export function toToolError(thrown: unknown): ToolError {
  if (thrown instanceof MarginaliaError) {
    const message = `${thrown.message}${toolHint(thrown)}`
    return thrown.details ? { code: thrown.code, message, details: { ...thrown.details } } : { code: thrown.code, message }
  }
  if (thrown instanceof z.ZodError) return toToolError(ValidationError.fromZod(thrown))
  if (thrown instanceof Error && thrown.name === 'AbortError') return { code: 'CANCELLED', message: 'The call was cancelled.' }
  return { code: 'INTERNAL_ERROR', message: `Internal error: ${thrown instanceof Error ? thrown.message : String(thrown)}` }
}

/** The store's errors name no tool (REST clients get them too): an agent is told which tool helps. */
function toolHint(error: MarginaliaError): string {
  if (error instanceof NotFoundError) return error.kind === 'session' ? ' list_sessions shows the existing sessions.' : ' get_all_pending or get_session shows existing annotations.'
  if (error instanceof CursorExpiredError) return ' get_all_pending and get_session give the current state.'
  return ''
}
