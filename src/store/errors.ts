/**
 * Typed errors. Every error the store raises carries a machine-readable `code` that the MCP
 * tools and the HTTP API pass on unchanged, and a message that says what to do about it.
 */
import type { z } from 'zod'
import type { AnnotationStatus } from './model.js'

export const ERROR_CODES = [
  'NOT_FOUND',
  'INVALID_TRANSITION',
  'INVALID_PARAMS',
  'CONFLICT',
  'CURSOR_EXPIRED',
  'STORE_FILE',
  'STORE_BUSY',
  'STORE_UNAVAILABLE',
  'STORE_CLOSED',
  'UNAUTHORIZED',
  'NO_BROWSER',
  'INTERNAL_ERROR',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export class MarginaliaError extends Error {
  readonly code: ErrorCode
  readonly details: Readonly<Record<string, unknown>> | undefined
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
    this.details = details
  }
  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details ? { code: this.code, message: this.message, details: { ...this.details } } : { code: this.code, message: this.message }
  }
}

export type EntityKind = 'session' | 'annotation' | 'identity'

/** Longest piece of caller input (an id, a key, a field path) repeated in an error message. */
const ECHO_LIMIT = 200
/** At most this many field issues are reported; the rest are counted. */
const MAX_ISSUES = 20

/**
 * Clip caller input before it is echoed in an error, so an error never grows with a hostile
 * input (a megabyte-long unknown key would otherwise come back twice in the reply).
 */
export function clipEcho(text: string, max: number = ECHO_LIMIT): string {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max // never split a surrogate pair
  return `${text.slice(0, end)}… (${text.length} characters)`
}

export class NotFoundError extends MarginaliaError {
  readonly kind: EntityKind
  readonly id: string
  constructor(kind: EntityKind, id: string) {
    // No hint naming a tool: REST clients get this error too. The MCP tools add theirs from `kind`.
    super('NOT_FOUND', `No ${kind} with id "${clipEcho(id)}" exists.`, { kind, id: clipEcho(id) })
    this.kind = kind
    this.id = id
  }
}

export class InvalidTransitionError extends MarginaliaError {
  readonly action: string
  readonly currentStatus: AnnotationStatus
  readonly annotationId: string
  constructor(action: string, annotationId: string, currentStatus: AnnotationStatus, allowedFrom: readonly AnnotationStatus[]) {
    super(
      'INVALID_TRANSITION',
      `Cannot ${action} annotation "${annotationId}": it is ${currentStatus}; ${action} is allowed only from ${allowedFrom.join(' or ')}.` +
        (action === 'acknowledge' ? ' Someone already took it; pick another pending annotation.' : ''),
      { action, annotationId, currentStatus, allowedFrom: [...allowedFrom] },
    )
    this.action = action
    this.currentStatus = currentStatus
    this.annotationId = annotationId
  }
}

export interface FieldIssue {
  path: string
  message: string
}

export class ValidationError extends MarginaliaError {
  readonly issues: readonly FieldIssue[]
  constructor(all: FieldIssue[], context?: string) {
    // Paths and messages can repeat caller input (zod names unknown keys): clip them, and count
    // issues beyond MAX_ISSUES instead of listing them.
    const issues = all.slice(0, MAX_ISSUES).map((i) => ({ path: clipEcho(i.path), message: clipEcho(i.message, 2 * ECHO_LIMIT) }))
    if (all.length > MAX_ISSUES) issues.push({ path: '', message: `and ${all.length - MAX_ISSUES} more issue(s)` })
    const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')
    super('INVALID_PARAMS', `${context ? `${context}: ` : ''}invalid input — ${summary}`, { issues })
    this.issues = issues
  }

  static fromZod(error: z.ZodError, context?: string): ValidationError {
    return new ValidationError(
      error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      context,
    )
  }
}

export class ConflictError extends MarginaliaError {
  readonly currentRev: number
  readonly currentStatus: AnnotationStatus
  constructor(annotationId: string, expectedRev: number, currentRev: number, currentStatus: AnnotationStatus) {
    super(
      'CONFLICT',
      `Annotation "${annotationId}" changed since you read it (expected rev ${expectedRev}, it is now at rev ${currentRev} and ${currentStatus}). Read it again and decide with the current state.`,
      { annotationId, expectedRev, currentRev, currentStatus },
    )
    this.currentRev = currentRev
    this.currentStatus = currentStatus
  }
}

export class CursorExpiredError extends MarginaliaError {
  readonly oldestRev: number
  readonly currentRev: number
  constructor(sinceRev: number, oldestRev: number, currentRev: number) {
    super(
      'CURSOR_EXPIRED',
      `Changes since rev ${sinceRev} are no longer available: the oldest event still kept is rev ${oldestRev}. ` +
        `Read the current state again and continue from the current rev ${currentRev}.`,
      { sinceRev, oldestRev, currentRev },
    )
    this.oldestRev = oldestRev
    this.currentRev = currentRev
  }
}

/**
 * Stored events that do not make a store: one that does not fit the state (it names an
 * annotation that does not exist), or a gap in the revs. Raised by the core while it replays
 * what its adapter read; nothing was changed. The code is `STORE_FILE` for every adapter (the
 * name predates adapters other than the file).
 */
export class StoreDataError extends MarginaliaError {
  /** The adapter's location (a file path, a database URL without secrets). */
  readonly location: string
  /** What is wrong, without the location. */
  readonly problem: string
  constructor(location: string, problem: string, options?: ErrorOptions) {
    super('STORE_FILE', `${location}: ${problem}.`, { location }, options)
    this.location = location
    this.problem = problem
  }
}

/** A credential that does not (or no longer) work: used, expired, signed out, or its identity revoked. HTTP: 401. */
export class CredentialError extends MarginaliaError {
  constructor(message: string) {
    super('UNAUTHORIZED', message)
  }
}

export class StoreClosedError extends MarginaliaError {
  constructor() {
    super('STORE_CLOSED', 'The store is closed.')
  }
}

/** Who holds the store's write lock, as far as the lock says. */
export interface LockHolder {
  pid?: number
  host?: string
  /** The holder's process start time (OS-specific ticks on Linux), to tell a reused pid apart. */
  started?: string
  /** When it took the lock (ISO time). */
  since?: string
}

/**
 * Another live process holds the store's write lock and did not let go within the bounded wait.
 * Nothing was written; retry after `retryAfterSeconds`. REST answers 503 with Retry-After.
 */
export class StoreBusyError extends MarginaliaError {
  readonly retryAfterSeconds: number
  readonly holder: LockHolder | undefined
  constructor(location: string, waitedMs: number, holder: LockHolder | undefined, retryAfterSeconds = 1) {
    const who = holder?.pid !== undefined ? `process ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}` : 'another process'
    super(
      'STORE_BUSY',
      `${location}: the store is busy: ${who} has held its write lock for over ${waitedMs} ms (stopped, suspended, or very slow). Nothing was written; try again in a moment.`,
      { location, waitedMs, retryAfterSeconds, ...(holder ? { holder: { ...holder } } : {}) },
    )
    this.retryAfterSeconds = retryAfterSeconds
    this.holder = holder
  }
}

/**
 * The store's database cannot be reached (refused, timed out, restarted, connection dropped).
 * Nothing of the command was written; the adapter reconnects with backoff, so retry shortly.
 */
export class StoreUnavailableError extends MarginaliaError {
  /** Seconds after which a retry is worth it (HTTP `Retry-After`). */
  readonly retryAfterSeconds: number
  constructor(location: string, problem: string, retryAfterSeconds = 1, options?: ErrorOptions) {
    super('STORE_UNAVAILABLE', `The store at ${location} is unavailable (${problem}); nothing was written. Retry in ${retryAfterSeconds} s.`, { location, retryAfterSeconds }, options)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** No browser showing an annotation's page answered a capture request in time. */
export class NoBrowserError extends MarginaliaError {
  constructor(annotationId: string, url: string, timeoutMs: number) {
    super(
      'NO_BROWSER',
      `No browser showing ${url || 'the annotation\'s page'} answered within ${timeoutMs} ms: ask the person to open ${url || 'the page'} (with the overlay) and try again.`,
      { annotationId: clipEcho(annotationId), url: clipEcho(url, 1_000), timeoutMs },
    )
  }
}
