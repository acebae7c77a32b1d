/**
 * Nothing the person typed is lost: every annotation goes into a localStorage outbox before it
 * is sent, and leaves it only once the server has stored it. While the server is unreachable it
 * waits there (across reloads) and is retried with backoff. The sender (./sender.ts: each item
 * sent exactly once) is fetched when something waits ({@link LazySender}).
 */
import { LIMITS } from '../../../store/vocabulary.js'
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

/**
 * Whether `a` is what `body` asked the server to store: the same comment, on the same element, from
 * the same URL. What an outbox item is looked for by once the server may have it.
 */
export function storedAs(a: Annotation, body: NewAnnotation): boolean {
  return a.comment === body.comment && (a.element?.selector ?? '') === (body.element?.selector ?? '') && (a.url ?? '') === (body.url ?? '')
}

/**
 * The outbox list, in localStorage when it works, else in memory; and, in memory, which item this
 * tab is posting now.
 */
export class Outbox {
  private memory: OutboxItem[] = []
  /** The item being posted, with the ids of the page's annotations known when its POST went. */
  private inFlight: { id: string; known: ReadonlySet<string> } | undefined

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

  /** `id` is being posted; `known` is what the page shows now (its stored copy will be new). */
  posting(id: string, known: readonly Annotation[]): void {
    this.inFlight = { id, known: new Set(known.map((a) => a.id)) }
  }

  /** No POST is on its way from this tab any more (answered, failed or given up). */
  posted(): void {
    this.inFlight = undefined
  }

  /**
   * What waits, less the item whose POST is on its way when the page already shows its stored copy:
   * the server's event for it can come before the POST's answer, and it must not be drawn twice.
   */
  shown(known: readonly Annotation[]): OutboxItem[] {
    const items = this.list()
    const flight = this.inFlight
    if (!flight) return items
    return items.filter((item) => item.id !== flight.id || !known.some((a) => !flight.known.has(a.id) && storedAs(a, item.body)))
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
  /** The item's POST is about to go. */
  posting(item: OutboxItem): void
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

/**
 * What `pageKey` sent that waits in the outbox (the server is down or slow), as annotations for
 * pins of their own (ids start with WAITING); one the server refused for good waits only in the list.
 */
export function waitingOn(outbox: Outbox, pageKey: string, known: readonly Annotation[]): Annotation[] {
  return outbox
    .shown(known)
    .filter((item) => item.pageKey === pageKey && item.rejected === undefined)
    .map(({ id, queuedAt, body }): Annotation => {
      const { comment, element, selectedText, elements, area } = body
      return { id: `${WAITING}${id}`, sessionId: '', status: 'pending', comment, element, selectedText, elements, area, replies: [], createdAt: queuedAt, updatedAt: queuedAt, rev: 0 }
    })
}

/** What the overlay holds of the sender: the real one (./sender.ts) once it has been fetched. */
export interface OutboxSender {
  /** Send everything waiting; resolves when this round is done (a retry may be scheduled). */
  flush(): Promise<void>
  /** Retry soon, from the first delay again (the server seems back). */
  retrySoon(): void
  stop(): void
}

/**
 * The sender as the page holds it before anything waits: with nothing sendable in the outbox a
 * flush is drained at once; otherwise the real sender is fetched (`make`) and flushes. When it
 * cannot be fetched (the server went away with it), the items wait, the sender's events say it is
 * blocked, and it is tried again with the sender's backoff (and at once when the server is back).
 */
export class LazySender implements OutboxSender {
  private sender: OutboxSender | undefined
  private making: Promise<OutboxSender> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private delay: number
  private stopped = false

  constructor(
    private readonly outbox: Outbox,
    private readonly make: () => Promise<OutboxSender>,
    private readonly events: Pick<SenderEvents, 'blocked' | 'drained'>,
    private readonly retryMs = 1_000,
    private readonly maxRetryMs = 15_000,
  ) {
    this.delay = retryMs
  }

  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    if (this.sender) return this.sender.flush()
    if (!this.outbox.list().some((item) => item.rejected === undefined)) {
      this.events.drained()
      return Promise.resolve()
    }
    clearTimeout(this.timer)
    this.timer = undefined
    this.making ??= this.make()
    return this.making.then(
      (sender) => {
        if (this.stopped) return sender.stop()
        this.sender ??= sender
        return this.sender.flush()
      },
      (e: unknown) => {
        this.making = undefined
        if (this.stopped || this.timer !== undefined) return
        this.events.blocked(`Could not load the sender from the Marginalia server: ${e instanceof Error ? e.message : String(e)}`)
        this.timer = setTimeout(() => {
          this.timer = undefined
          void this.flush()
        }, this.delay)
        this.delay = Math.min(this.maxRetryMs, this.delay * 2)
      },
    )
  }

  retrySoon(): void {
    if (this.sender) return this.sender.retrySoon()
    this.delay = this.retryMs
    void this.flush()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.sender?.stop()
  }
}
