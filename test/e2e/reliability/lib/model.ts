/**
 * A tiny reference model of the annotation store, written from the documented status machine (docs/guide/agents.md) and
 * command descriptions, independently of src/store (it imports nothing from it). The property
 * tests run the same commands against the store and against this model and compare.
 */

export type Status = 'pending' | 'acknowledged' | 'resolved' | 'dismissed'
export const STATUSES: readonly Status[] = ['pending', 'acknowledged', 'resolved', 'dismissed']
type StatusOp = 'acknowledge' | 'resolve' | 'dismiss' | 'reopen'

/** The transition table, as the docs state it. `reply` changes no status. */
const TABLE: Record<StatusOp, { from: readonly Status[]; to: Status }> = {
  acknowledge: { from: ['pending'], to: 'acknowledged' },
  resolve: { from: STATUSES, to: 'resolved' },
  dismiss: { from: STATUSES, to: 'dismissed' },
  reopen: { from: ['acknowledged', 'resolved', 'dismissed'], to: 'pending' },
}

export interface MReply {
  author: string
  message: string
  kind?: string
  createdAt: string
}

export interface MAnnotation {
  id: string
  sessionId: string
  status: Status
  comment: string
  replies: MReply[]
  createdAt: string
  updatedAt: string
  resolvedAt?: string
  rev: number
  [extra: string]: unknown
}

export interface MSession {
  id: string
  url: string
  name?: string
  createdAt: string
  updatedAt: string
  rev: number
}

/** The fields of an event the model predicts. */
export interface MEvent {
  type: string
  sessionId: string
  annotationId?: string
  action?: string
  from?: Status
  to?: Status
  reply?: Omit<MReply, 'createdAt'>
}

export type Call =
  | { op: 'createSession'; url: unknown; name?: unknown }
  | { op: 'addAnnotation'; sessionId: unknown; comment: unknown; extra: Record<string, unknown>; extraValid: boolean }
  | { op: StatusOp; id: unknown; text?: unknown; expectedRev?: unknown }
  | { op: 'reply'; id: unknown; author: unknown; message: unknown; kind?: unknown; expectedRev?: unknown }
  | { op: 'delete'; id: unknown; expectedRev?: unknown }
  | { op: 'archive'; olderThanMs: number }

export type Prediction = { ok: true } | { ok: false; code: string }

const MAX_MESSAGE = 10_000
const MAX_COMMENT = 10_000
const MAX_URL = 4_096
const MAX_NAME = 200
const MAX_ID = 128

/** A string, at most `max` UTF-16 units, not empty once trimmed. */
function nonBlank(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length <= max && value.trim().length > 0
}

function optionalNonBlank(value: unknown, max: number): boolean {
  return value === undefined || nonBlank(value, max)
}

function validRev(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)
}

/** (createdAt, id) order: oldest first, ties by id. */
function byCreation(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export class Model {
  rev = 0
  readonly sessions = new Map<string, MSession>()
  readonly annotations = new Map<string, MAnnotation>()
  /** Every annotation id ever created, in creation order (deleted ones included). */
  readonly everAnnotations: string[] = []
  readonly everSessions: string[] = []

  /** Would the store accept this call, and if not, with which code? */
  predict(call: Call, now: string): Prediction {
    const refuse = (code: string): Prediction => ({ ok: false, code })
    switch (call.op) {
      case 'createSession':
        if (!nonBlank(call.url, MAX_URL) || !isWebUrl(call.url as string)) return refuse('INVALID_PARAMS')
        if (call.name !== undefined && !(typeof call.name === 'string' && call.name.length <= MAX_NAME)) return refuse('INVALID_PARAMS')
        return { ok: true }
      case 'addAnnotation':
        if (typeof call.sessionId !== 'string' || call.sessionId.length === 0 || call.sessionId.length > MAX_ID) return refuse('INVALID_PARAMS')
        if (!nonBlank(call.comment, MAX_COMMENT) || !call.extraValid) return refuse('INVALID_PARAMS')
        if (!this.sessions.has(call.sessionId)) return refuse('NOT_FOUND')
        return { ok: true }
      case 'archive':
        if (!Number.isFinite(call.olderThanMs) || call.olderThanMs < 0) return refuse('INVALID_PARAMS')
        void now
        return { ok: true }
      default: {
        // Input first (the command's own fields), then the id, then expectedRev, then the table.
        if (call.op === 'dismiss' ? !nonBlank(call.text, MAX_MESSAGE) : call.op !== 'reply' && call.op !== 'delete' && !optionalNonBlank(call.text, MAX_MESSAGE)) {
          return refuse('INVALID_PARAMS')
        }
        if (call.op === 'reply') {
          if (call.author !== 'agent' && call.author !== 'human') return refuse('INVALID_PARAMS')
          if (!nonBlank(call.message, MAX_MESSAGE)) return refuse('INVALID_PARAMS')
          if (call.kind !== undefined && call.kind !== 'message' && call.kind !== 'question') return refuse('INVALID_PARAMS')
        }
        if (!validRev(call.expectedRev)) return refuse('INVALID_PARAMS')
        if (typeof call.id !== 'string' || call.id.length === 0) return refuse('INVALID_PARAMS')
        const a = this.annotations.get(call.id)
        if (!a) return refuse('NOT_FOUND')
        if (call.expectedRev !== undefined && call.expectedRev !== a.rev) return refuse('CONFLICT')
        if (call.op !== 'reply' && call.op !== 'delete' && !TABLE[call.op].from.includes(a.status)) return refuse('INVALID_TRANSITION')
        return { ok: true }
      }
    }
  }

  /**
   * Apply an accepted call at time `now`. `newId` is the id the store gave a created record
   * (ids are opaque; the model only checks that they are new). Returns the events it expects.
   */
  apply(call: Call, now: string, newId?: string): MEvent[] {
    switch (call.op) {
      case 'createSession': {
        const id = this.fresh(newId)
        const rev = ++this.rev
        const s: MSession = { id, url: call.url as string, createdAt: now, updatedAt: now, rev }
        if (call.name !== undefined) s.name = call.name as string
        this.sessions.set(id, s)
        this.everSessions.push(id)
        return [{ type: 'session.created', sessionId: id }]
      }
      case 'addAnnotation': {
        const id = this.fresh(newId)
        const rev = ++this.rev
        const a: MAnnotation = {
          ...structuredClone(call.extra),
          id,
          sessionId: call.sessionId as string,
          status: 'pending',
          comment: call.comment as string,
          replies: [],
          createdAt: now,
          updatedAt: now,
          rev,
        }
        this.annotations.set(id, a)
        this.everAnnotations.push(id)
        return [{ type: 'annotation.created', sessionId: a.sessionId, annotationId: id }]
      }
      case 'archive': {
        const cutoff = new Date(Date.parse(now) - call.olderThanMs).toISOString()
        const due = [...this.annotations.values()].filter((a) => (a.status === 'resolved' || a.status === 'dismissed') && a.updatedAt < cutoff).sort(byCreation)
        return due.map((a) => {
          this.rev++
          this.annotations.delete(a.id)
          return { type: 'annotation.archived', sessionId: a.sessionId, annotationId: a.id, from: a.status }
        })
      }
      case 'delete': {
        const a = this.annotations.get(call.id as string)!
        this.rev++
        this.annotations.delete(a.id)
        return [{ type: 'annotation.deleted', sessionId: a.sessionId, annotationId: a.id, from: a.status }]
      }
      case 'reply': {
        const a = this.annotations.get(call.id as string)!
        const reply: MReply = { author: call.author as string, message: call.message as string, createdAt: now }
        if (call.kind !== undefined) reply.kind = call.kind as string
        a.replies.push(reply)
        a.updatedAt = now
        a.rev = ++this.rev
        const { createdAt: _c, ...shown } = reply
        return [{ type: 'annotation.replied', sessionId: a.sessionId, annotationId: a.id, reply: shown }]
      }
      default: {
        const a = this.annotations.get(call.id as string)!
        const from = a.status
        const to = TABLE[call.op].to
        a.status = to
        a.updatedAt = now
        a.rev = ++this.rev
        if (to === 'resolved') a.resolvedAt = now
        else delete a.resolvedAt
        const event: MEvent = { type: 'annotation.status_changed', sessionId: a.sessionId, annotationId: a.id, action: call.op, from, to }
        if (call.text !== undefined) {
          const reply: MReply = { author: call.op === 'reopen' ? 'human' : 'agent', message: call.text as string, createdAt: now }
          a.replies.push(reply)
          event.reply = { author: reply.author, message: reply.message }
        }
        return [event]
      }
    }
  }

  private fresh(id: string | undefined): string {
    if (typeof id !== 'string' || id.length === 0) throw new Error(`the store gave no id (${String(id)})`)
    if (this.everAnnotations.includes(id) || this.everSessions.includes(id)) throw new Error(`the store reused the id ${id}`)
    return id
  }

  // ---- brute-force queries --------------------------------------------------------------------

  sessionList(): MSession[] {
    return [...this.sessions.values()].sort(byCreation)
  }

  annotationList(filter: { sessionId?: string; status?: Status } = {}): MAnnotation[] {
    return [...this.annotations.values()]
      .filter((a) => (filter.sessionId === undefined || a.sessionId === filter.sessionId) && (filter.status === undefined || a.status === filter.status))
      .sort(byCreation)
  }

  /** Annotations whose latest agent question has no human reply after it, oldest first. */
  openQuestions(): { id: string; question: MReply }[] {
    const out: { id: string; question: MReply }[] = []
    for (const a of this.annotationList()) {
      for (let i = a.replies.length - 1; i >= 0; i--) {
        const r = a.replies[i]!
        if (r.author === 'human') break
        if (r.kind === 'question') {
          out.push({ id: a.id, question: r })
          break
        }
      }
    }
    return out
  }
}

/** Session and annotation URLs: absolute http: or https: only. */
function isWebUrl(s: string): boolean {
  try {
    const { protocol } = new URL(s)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}
