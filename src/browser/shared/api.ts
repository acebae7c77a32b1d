/**
 * The REST client the overlay and the inbox share: fetch with a timeout, JSON in and out, and two
 * kinds of failure the UI treats differently — the server could not be reached at all
 * (`UnreachableError`: keep things and retry) or it answered with an error (`ApiError`).
 */
import type { Auth } from './auth.js'
import { randomId } from './format.js'
import type { Annotation, Attachment, AnnotationStatus, BulkAction, BulkResult, ElementInfo, Health, Identity, NewAnnotation, QuestionList, SearchList, SearchParams, Session, SessionList, SessionPage } from './types.js'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export class UnreachableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnreachableError'
  }
}

/**
 * How requests reach the server: `fetch` in a page that loaded the overlay itself; the browser
 * extension hands in one that goes through its service worker (a page's Content-Security-Policy
 * cannot block that, and the person's session never enters the page).
 */
export type Transport = (url: string, init: RequestInit) => Promise<Response>

const PAGE_LIMIT = 500
const UPLOAD_TIMEOUT_MS = 15_000

/** Uploads an image as the page's person: the overlay's and the inbox's `Api`. */
export interface Uploader {
  upload(blob: Blob, kind: Attachment['kind'], timeoutMs?: number): Promise<Attachment>
}


/**
 * The project a page expects its server to serve, as the build plugin names it on the overlay's
 * script tag (`data-store`: the store's id; `data-project`: the project's name).
 */
export interface ExpectedServer {
  store?: string
  project?: string
}

/** Why the server `health` describes is not the one `expected` names, or undefined when it may be. */
function foreignServer(expected: ExpectedServer, health: Health, base: string): string | undefined {
  const served = health.store
  const sameStore = expected.store === undefined || served === undefined || served.id === expected.store
  const sameProject = expected.project === undefined || served?.project === undefined || served.project === expected.project
  if (sameStore && (sameProject || expected.store !== undefined)) return undefined
  const ours = expected.project !== undefined ? `project “${expected.project}”` : 'this project'
  const theirs = served?.project !== undefined ? `project “${served.project}”` : `another project (store ${served?.id ?? '?'})`
  return `This page belongs to ${ours}, but the Marginalia server at ${base.replace(/^https?:\/\//, '')} serves ${theirs}. Nothing is sent there (it would land in that project’s inbox): stop that server, then restart this project’s dev server.`
}

export class Api implements Uploader {
  /** Which project's server the page expects; unset: any (the inbox, the extension, a plain script tag). */
  private expected: ExpectedServer | undefined
  /** Why the server is another project's, from its latest /health; undefined while it is this one's (or not yet known). */
  foreign: string | undefined
  private checked = false

  constructor(
    /** The server's base URL, e.g. `http://127.0.0.1:4848` (no trailing slash). */
    readonly base: string,
    private readonly timeoutMs = 10_000,
    /** A signed-in person's session: sent as a bearer header; dropped when the server says it no longer works. */
    readonly auth?: Auth,
    readonly transport: Transport = (url, init) => fetch(url, init),
  ) {}

  /** Refuse every request but /health while the server serves another project than `expected`. */
  expectServer(expected: ExpectedServer): void {
    this.expected = expected.store !== undefined || expected.project !== undefined ? expected : undefined
  }

  /** Throws when the server is known (or, first asked, found) to be another project's. */
  private async ensureOurs(): Promise<void> {
    if (!this.expected) return
    if (!this.checked) await this.health()
    if (this.foreign !== undefined) throw new ApiError(409, 'FOREIGN_SERVER', this.foreign)
  }

  /** Headers that say who we are (none in local use). */
  authHeaders(): Record<string, string> {
    return this.auth?.headers() ?? {}
  }

  /** Any JSON route (the inbox's admin panels): answers its body, throws ApiError on a non-2xx. */
  call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.request(method, path, body)
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (path !== '/health') await this.ensureOurs()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), this.timeoutMs)
    let response: Response
    let text: string
    try {
      response = await this.transport(this.base + path, {
        method,
        headers: { ...this.authHeaders(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? null : JSON.stringify(body),
        signal: controller.signal,
        credentials: 'omit',
        cache: 'no-store',
      })
      text = await response.text()
    } catch {
      throw new UnreachableError(`Can't reach Marginalia at ${this.base}.`)
    } finally {
      clearTimeout(timer)
    }
    let json: unknown
    try {
      json = text === '' ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    if (response.status === 401 && this.auth?.current) this.auth.clear() // revoked, signed out or expired
    if (!response.ok) {
      const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error
      throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? `${method} ${path} failed with ${response.status}.`)
    }
    return json as T
  }

  async health(): Promise<Health> {
    const health = await this.request<Health>('GET', '/health')
    if (this.expected) {
      this.foreign = foreignServer(this.expected, health, this.base)
      this.checked = true
    }
    return health
  }

  /** A page of the sessions, oldest first; with `url`, only that page's (its URL exactly). */
  sessions(cursor?: string, limit = PAGE_LIMIT, url?: string): Promise<SessionList> {
    return this.request('GET', `/api/sessions${query({ limit, cursor, url })}`)
  }

  session(id: string, options: { cursor?: string; status?: AnnotationStatus; limit?: number } = {}): Promise<SessionPage> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}${query({ limit: options.limit ?? PAGE_LIMIT, cursor: options.cursor, status: options.status })}`)
  }

  createSession(url: string, name?: string): Promise<Session> {
    return this.request('POST', '/api/sessions', name ? { url, name } : { url })
  }

  addAnnotation(sessionId: string, body: NewAnnotation): Promise<Annotation> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(sessionId)}/annotations`, body)
  }

  /** A search (the inbox's list): filters as comma lists, `sort`, `q`; the answer carries totals per session and status. */
  search(params: SearchParams): Promise<SearchList> {
    return this.request('GET', `/api/annotations${query({ ...params, limit: params.limit ?? 100 })}`)
  }

  /** One action on a selection; each annotation is its own change. */
  bulk(action: BulkAction, ids: readonly string[], message?: string): Promise<BulkResult> {
    return this.request('POST', '/api/annotations/bulk', message ? { action, ids, message } : { action, ids })
  }

  annotation(id: string): Promise<Annotation> {
    return this.request('GET', one(id))
  }

  /** The people and agents the store knows (admins, the operator and local use may read it; others get 403). */
  identities(): Promise<{ identities: Identity[] }> {
    return this.request('GET', '/api/identities')
  }

  questions(): Promise<QuestionList> {
    return this.request('GET', '/api/questions')
  }

  /** A reply; `pointed`: the element the person clicked to answer a question asking them to point. */
  reply(id: string, message: string, attachments?: Attachment[], pointed?: Pick<NewAnnotation, 'element' | 'source'>): Promise<Annotation> {
    return this.request('POST', one(id, '/replies'), { message, ...(attachments && attachments.length > 0 ? { attachments } : {}), ...pointed })
  }

  reopen(id: string, message?: string): Promise<Annotation> {
    return this.request('POST', one(id, '/reopen'), message ? { message } : {})
  }

  remove(id: string): Promise<Annotation> {
    return this.request('DELETE', one(id))
  }

  /** Answer an agent's capture request with the picture uploaded for it. */
  captured(id: string, body: { requestId: string; attachment: Attachment; url: string; anchor: 'found' | 'moved' | 'missing'; capturedAt: string; attachTo?: string; element?: ElementInfo; token?: string }): Promise<{ requestId: string }> {
    return this.request('POST', one(id, '/captures'), body)
  }

  /** Upload one image (with who sends it); the server sniffs its type and answers with the record. */
  async upload(blob: Blob, kind: Attachment['kind'], timeoutMs = UPLOAD_TIMEOUT_MS): Promise<Attachment> {
    await this.ensureOurs()
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    try {
      const response = await this.transport(`${this.base}/api/attachments`, { method: 'POST', headers: { ...this.authHeaders(), 'Content-Type': blob.type || 'application/octet-stream' }, body: blob, signal: controller.signal, credentials: 'omit' })
      if (!response.ok) throw new Error(`upload refused (${response.status})`)
      const s = (await response.json()) as Omit<Attachment, 'id' | 'kind'>
      return { id: `att_${randomId().slice(-12)}`, kind, mime: s.mime, bytes: s.bytes, width: s.width, height: s.height, sha256: s.sha256 }
    } finally {
      clearTimeout(timer)
    }
  }

  /** Every session (page after page), up to `max`; with `url`, every session of that page. */
  async allSessions(max = 10_000, url?: string): Promise<Session[]> {
    const out: Session[] = []
    let cursor: string | undefined
    do {
      const page = await this.sessions(cursor, undefined, url)
      out.push(...page.sessions)
      cursor = page.nextCursor
    } while (cursor !== undefined && out.length < max)
    return out
  }
}

/** An annotation's path, and what follows it (`/replies`). */
function one(id: string, tail = ''): string {
  return `/api/annotations/${encodeURIComponent(id)}${tail}`
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}

/** Human words for a failure. */
export function describeError(e: unknown): string {
  if (e instanceof UnreachableError || e instanceof ApiError) return e.message
  return e instanceof Error ? e.message : String(e)
}
