/**
 * Nothing the person typed is lost: every annotation goes into a localStorage outbox before it
 * is sent, and leaves it only once the server has stored it. While the server is unreachable it
 * waits there (across reloads) and is retried with backoff.
 *
 * Sent exactly once:
 * - one flush at a time per tab (a promise chain), and across tabs of the origin through the
 *   Web Locks API where the browser has it; the list is re-read inside the lock;
 * - an item's attempt count is saved before each POST. An item that was attempted before and
 *   failed in a way that may hide a success (the answer was lost) is first looked for in its
 *   session — same comment, element and URL, created since it was queued — and not sent again
 *   if it is there.
 */
import { LIMITS } from '../../../store/vocabulary.js'
import { ApiError, UnreachableError, type Api } from '../../shared/api.js'
import { clip, randomId } from '../../shared/format.js'
import type { Annotation, NewAnnotation } from '../../shared/types.js'

/** Ids of annotations that wait in this browser's outbox (not on the server yet) start so. */
const WAITING = 'outbox:'
export const isWaiting = (id: string): boolean => id.startsWith(WAITING)

export interface OutboxItem {
  /** A client-side id (not the annotation's). */
  id: string
  /** When the person submitted it (ISO-8601). */
  queuedAt: string
  /** Which page's session it belongs to: origin + pathname. */
  pageKey: string
  /** Name for the session if one has to be created (the page title). */
  pageTitle?: string
  body: NewAnnotation
  attempts: number
  lastError?: string
  /** The server refused it for good (e.g. 400): kept so the person can copy or discard it. */
  rejected?: string
}

/** What the person just sent from `pageKey` (titled `title`), as it waits in the outbox. */
export function outboxItem(pageKey: string, body: NewAnnotation, title: string): OutboxItem {
  const id = randomId()
  const item: OutboxItem = { id, queuedAt: new Date().toISOString(), pageKey, body, attempts: 0 }
  if (title) item.pageTitle = clip(title, LIMITS.name)
  return item
}

/** The outbox list, in localStorage when it works, else in memory. */
export class Outbox {
  private memory: OutboxItem[] = []

  constructor(
    private readonly storage: Storage | undefined,
    readonly key: string,
  ) {}

  list(): OutboxItem[] {
    if (!this.storage) return this.memory.map((i) => ({ ...i }))
    try {
      const raw = this.storage.getItem(this.key)
      if (raw === null) return []
      const parsed = JSON.parse(raw) as unknown
      return Array.isArray(parsed) ? parsed.filter(isItem) : []
    } catch {
      return this.memory.map((i) => ({ ...i }))
    }
  }

  add(item: OutboxItem): void {
    this.save([...this.list(), item])
  }

  update(id: string, patch: Partial<OutboxItem>): void {
    this.save(this.list().map((i) => (i.id === id ? { ...i, ...patch } : i)))
  }

  remove(id: string): void {
    this.save(this.list().filter((i) => i.id !== id))
  }

  private save(items: OutboxItem[]): void {
    this.memory = items
    if (!this.storage) return
    try {
      if (items.length === 0) this.storage.removeItem(this.key)
      else this.storage.setItem(this.key, JSON.stringify(items))
    } catch {
      // Storage full or disabled: the in-memory copy still holds it for this page's life.
    }
  }
}

function isItem(v: unknown): v is OutboxItem {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  return typeof o.id === 'string' && typeof o.pageKey === 'string' && typeof o.queuedAt === 'string' && typeof o.attempts === 'number' && typeof o.body === 'object' && o.body !== null && typeof (o.body as Record<string, unknown>).comment === 'string'
}

export interface SessionResolver {
  /** The session id for a page, creating the session when there is none. */
  ensure(pageKey: string, title?: string): Promise<string>
  /** Forget a stored session id (it 404ed). */
  forget(pageKey: string): void
}

export interface SenderEvents {
  sent(item: OutboxItem, annotation: Annotation, sessionId: string): void
  /** The server could not be reached (or answered 5xx/401/403): items wait for the next retry. */
  blocked(error: string): void
  /** Every sendable item was sent. */
  drained(): void
  rejected(item: OutboxItem, error: string): void
}

export interface SenderOptions {
  retryMs?: number
  maxRetryMs?: number
  /** Name of the cross-tab lock. */
  lockName: string
}

export class Sender {
  private running: Promise<void> | undefined
  private again = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private delay: number
  private readonly retryMs: number
  private readonly maxRetryMs: number
  private stopped = false

  constructor(
    private readonly api: Api,
    private readonly outbox: Outbox,
    private readonly sessions: SessionResolver,
    private readonly events: SenderEvents,
    private readonly options: SenderOptions,
  ) {
    this.retryMs = options.retryMs ?? 1_000
    this.maxRetryMs = options.maxRetryMs ?? 15_000
    this.delay = this.retryMs
  }

  /** Send everything waiting; resolves when this round is done (a retry may be scheduled). */
  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    if (this.running) {
      this.again = true
      return this.running
    }
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.running = (async () => {
      do {
        this.again = false
        await this.locked(() => this.round())
      } while (this.again && !this.stopped)
    })().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  /** Retry soon, from the first delay again (the server seems back). */
  retrySoon(): void {
    this.delay = this.retryMs
    void this.flush()
  }

  stop(): void {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private async locked(fn: () => Promise<void>): Promise<void> {
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined
    if (locks && typeof locks.request === 'function') {
      await locks.request(this.options.lockName, fn)
    } else {
      await fn()
    }
  }

  /** One pass over the outbox, re-read now (another tab may have sent some). */
  private async round(): Promise<void> {
    for (const item of this.outbox.list()) {
      if (this.stopped) return
      if (item.rejected !== undefined) continue
      try {
        await this.sendOne(item)
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e)
        if (e instanceof ApiError && e.status >= 400 && e.status < 500 && ![401, 403, 408, 409, 429].includes(e.status)) {
          this.outbox.update(item.id, { rejected: message, lastError: message })
          this.events.rejected(item, message)
          continue
        }
        // Unreachable, 5xx, auth or rate limits: keep it, try again later.
        this.outbox.update(item.id, { lastError: message })
        this.events.blocked(e instanceof UnreachableError ? e.message : message)
        this.schedule()
        return
      }
    }
    this.delay = this.retryMs
    this.events.drained()
  }

  private async sendOne(item: OutboxItem): Promise<void> {
    let sessionId = await this.sessions.ensure(item.pageKey, item.pageTitle)
    if (item.attempts > 0) {
      const earlier = await this.findEarlierCopy(sessionId, item).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return undefined
        throw e
      })
      if (earlier) {
        this.outbox.remove(item.id)
        this.events.sent(item, earlier, sessionId)
        return
      }
    }
    this.outbox.update(item.id, { attempts: item.attempts + 1 })
    let annotation: Annotation
    try {
      annotation = await this.api.addAnnotation(sessionId, item.body)
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e
      // The remembered session is gone (a new store): start a new one for this page.
      this.sessions.forget(item.pageKey)
      sessionId = await this.sessions.ensure(item.pageKey, item.pageTitle)
      annotation = await this.api.addAnnotation(sessionId, item.body)
    }
    this.outbox.remove(item.id)
    this.events.sent(item, annotation, sessionId)
  }

  /** An annotation in the session that is this item, stored by an attempt whose answer was lost. */
  private async findEarlierCopy(sessionId: string, item: OutboxItem): Promise<Annotation | undefined> {
    const since = Date.parse(item.queuedAt) - 5 * 60_000 // allow for clock skew between browser and server
    let cursor: string | undefined
    do {
      const page = await this.api.session(sessionId, cursor === undefined ? {} : { cursor })
      const match = page.annotations.find(
        (a) =>
          a.comment === item.body.comment &&
          (a.element?.selector ?? '') === (item.body.element?.selector ?? '') &&
          (a.url ?? '') === (item.body.url ?? '') &&
          Date.parse(a.createdAt) >= since,
      )
      if (match) return match
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return undefined
  }

  private schedule(): void {
    if (this.stopped || this.timer !== undefined) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.flush()
    }, this.delay)
    this.delay = Math.min(this.maxRetryMs, this.delay * 2)
  }
}

/**
 * What `pageKey` sent that waits in the outbox (the server is down or slow), as annotations for
 * pins of their own (ids start with WAITING); one the server refused for good waits only in the list.
 */
export function waitingOn(outbox: Outbox, pageKey: string): Annotation[] {
  return outbox
    .list()
    .filter((item) => item.pageKey === pageKey && item.rejected === undefined)
    .map(({ id, queuedAt, body }): Annotation => {
      const { comment, element, selectedText, elements, area } = body
      return { id: `${WAITING}${id}`, sessionId: '', status: 'pending', comment, element, selectedText, elements, area, replies: [], createdAt: queuedAt, updatedAt: queuedAt, rev: 0 }
    })
}
