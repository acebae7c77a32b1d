/**
 * The wire format the browser code sees. The records come from the store's zod model (type-only
 * imports: nothing of zod reaches the bundle); presence is the `/health` `agent` field and the
 * `presence` event.
 */
import type { Annotation, AnnotationStatus, Attachment, ElementInfo, Fingerprint, Identity, Intent, PageEntry, Rect, Reply, Session, Severity, Step, StepTarget, TextQuote, Viewport } from '../../store/model.js'
import type { SourceLocation } from '../../store/source-location.js'
import type { StoreEvent } from '../../store/events.js'

export type { Annotation, AnnotationStatus, Attachment, ElementInfo, Fingerprint, Identity, Intent, PageEntry, Reply, Session, Severity, Step, StepTarget, StoreEvent, TextQuote }

export interface Presence {
  connected: boolean
  sessions: number
  watching: number
  lastSeenAt?: string
}

export interface Health {
  status: string
  name: string
  version: string
  rev: number
  pending: number
  agent?: Presence
  /** The app's project root and editor, when the server knows them (editor links for source locations). */
  sourceRoot?: string
  editor?: string
  /** The server asks people to sign in. */
  signIn?: boolean
  /** Where an agent reaches the MCP endpoint, and which bearer secret it takes (none, the server's --token, an agent's own token). */
  mcp?: { url: string; auth: 'none' | 'server-token' | 'agent-token' }
  /** The store it serves: its id, the project's name (its location only when paths may be named). */
  store?: { id: string; project?: string; location?: string }
  /** How many of the agents' permission requests wait for an answer (to those who may answer them). */
  permissions?: { open: number }
}

interface PageInfo {
  count: number
  total: number
  nextCursor?: string
  rev: number
}

export type SessionPage = Session & PageInfo & { annotations: Annotation[] }
export type SessionList = PageInfo & { sessions: Session[] }
type AnnotationList = PageInfo & { annotations: Annotation[] }
export interface QuestionList {
  questions: { annotation: Annotation; question: Reply }[]
  count: number
  rev: number
}

/** What the overlay posts to `POST /api/sessions/:id/annotations`. */
export interface NewAnnotation {
  comment: string
  url?: string
  element?: ElementInfo
  selectedText?: string
  elements?: ElementInfo[]
  area?: Rect
  intent?: Intent
  severity?: Severity
  attachments?: Attachment[]
  context?: { entries: PageEntry[] }
  steps?: Step[]
  viewport?: Viewport
  source?: SourceLocation
}

/** `GET /api/annotations` as a search (the inbox): lists are comma-separated. */
export interface SearchParams {
  status?: string
  sessionId?: string
  intent?: string
  severity?: string
  author?: 'agent' | 'human'
  /** Who wrote it: identity ids, or `you` (no identity). */
  by?: string
  /** Which agent replied: identity ids. */
  agent?: string
  q?: string
  sort?: 'newest' | 'oldest'
  cursor?: string
  limit?: number
}
export type SearchList = AnnotationList & { totals: { sessions: Record<string, number>; statuses: Record<AnnotationStatus, number> } }
export type BulkAction = 'resolve' | 'dismiss' | 'reopen' | 'delete' | 'archive'
export interface BulkResult {
  action: BulkAction
  done: string[]
  failed: { id: string; code: string; message: string }[]
  rev: number
}
