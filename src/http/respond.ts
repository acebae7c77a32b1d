/**
 * JSON responses and the one error shape of the HTTP API: `{ error: { code, message, details? } }`.
 * Store errors keep their `code`; the status follows from it. Nothing internal (stack, paths)
 * reaches the client for an unexpected error: that goes to the log.
 */
import type { ServerResponse } from 'node:http'
import { MarginaliaError, StoreBusyError, StoreUnavailableError } from '../store/errors.js'

/** Every `code` the HTTP API answers with. */
export type HttpErrorCode =
  | 'NOT_FOUND'
  | 'INVALID_TRANSITION'
  | 'INVALID_PARAMS'
  | 'CONFLICT'
  | 'CURSOR_EXPIRED'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'ROLE_FORBIDDEN'
  | 'POLICY_FORBIDDEN'
  | 'RATE_LIMITED'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'INSUFFICIENT_STORAGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNAVAILABLE'
  | 'INTERNAL_ERROR'

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> }
}

/** An error that already knows its status; thrown by the HTTP layer, answered by `sendError`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: HttpErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers (e.g. `Allow`, `WWW-Authenticate`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'HttpError'
  }
}

const STATUS_OF_CODE: Partial<Record<string, number>> = {
  NOT_FOUND: 404,
  INVALID_TRANSITION: 409,
  CONFLICT: 409,
  INVALID_PARAMS: 400,
  CURSOR_EXPIRED: 410,
  UNAUTHORIZED: 401,
  STORE_CLOSED: 503,
  NO_BROWSER: 504,
}

/** Any thrown value → status, headers and error body. Unexpected errors are logged and masked. */
export function toErrorResponse(thrown: unknown, log: (message: string) => void): { status: number; headers: Record<string, string>; body: ErrorBody } {
  if (thrown instanceof HttpError) {
    const error = { code: thrown.code, message: thrown.message, ...(thrown.details ? { details: thrown.details } : {}) }
    return { status: thrown.status, headers: thrown.headers, body: { error } }
  }
  if (thrown instanceof MarginaliaError) {
    const store = storeErrorResponse(thrown)
    if (store) return store
    const status = STATUS_OF_CODE[thrown.code]
    if (status !== undefined) {
      if (status === 503) return { status, headers: {}, body: { error: { code: 'UNAVAILABLE', message: 'The server is shutting down.' } } }
      return { status, headers: {}, body: { error: thrown.toJSON() } }
    }
  }
  log(`internal error: ${thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown)}`)
  return { status: 500, headers: {}, body: { error: { code: 'INTERNAL_ERROR', message: 'Internal server error (details are in the server log).' } } }
}

/**
 * The store's own failures, with the reason and a status a client can act on: busy (503 and
 * Retry-After, naming the lock holder), unavailable (503), a full disk (507), a read-only or
 * forbidden store file (503), any other store-file problem (500). Never a masked INTERNAL_ERROR.
 */
function storeErrorResponse(error: MarginaliaError): { status: number; headers: Record<string, string>; body: ErrorBody } | undefined {
  const body = { error: error.toJSON() }
  if (error instanceof StoreBusyError) return { status: 503, headers: { 'Retry-After': String(error.retryAfterSeconds) }, body }
  if (error instanceof StoreUnavailableError) return { status: 503, headers: { 'Retry-After': String(error.retryAfterSeconds) }, body }
  if (error.code !== 'STORE_FILE') return undefined
  const errno = errnoOf(error)
  if (errno === 'ENOSPC' || errno === 'EDQUOT') return { status: 507, headers: {}, body }
  if (errno === 'EROFS' || errno === 'EACCES' || errno === 'EPERM' || /\bread-only\b/.test(error.message)) return { status: 503, headers: {}, body }
  return { status: 500, headers: {}, body }
}

/** The first errno code along an error's cause chain. */
function errnoOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code
  }
  return undefined
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...headers,
  })
  res.end(text)
}

export function sendError(res: ServerResponse, thrown: unknown, log: (message: string) => void, extraHeaders: Record<string, string> = {}): void {
  const { status, headers, body } = toErrorResponse(thrown, log)
  sendJson(res, status, body, { ...extraHeaders, ...headers })
}

/** The error shape the MCP endpoint uses (JSON-RPC, as the SDK's own transport errors are). */
export function sendRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers)
}
