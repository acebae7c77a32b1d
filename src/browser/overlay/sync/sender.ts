/**
 * The outbox's sender (the `sender` chunk, fetched when something waits in the outbox: see
 * `LazySender` in ./outbox.ts). Each item is sent exactly once:
 * - one flush at a time per tab (a promise chain), and across tabs of the origin through the
 *   Web Locks API where the browser has it; the list is re-read inside the lock;
 * - an item's attempt count is saved before each POST. An item that was attempted before and
 *   failed in a way that may hide a success (the answer was lost) is first looked for in its
 *   session — same comment, element and URL, created since it was queued — and not sent again
 *   if it is there.
 * The server's refusals are told by the error's name and status, not its class: this module is
 * built apart from overlay.js, whose `Api` throws them.
 */
import type { Api } from '../../shared/api.js'
import type { Annotation } from '../../shared/types.js'
import { storedAs, type Outbox, type OutboxItem, type SenderEvents, type SenderOptions, type SessionResolver } from './outbox.js'

/** The HTTP status of an `ApiError` (the server answered and refused), else undefined. */
function apiStatus(e: unknown): number | undefined {
  const status = e instanceof Error && e.name === 'ApiError' ? (e as { status?: unknown }).status : undefined
  return typeof status === 'number' ? status : undefined
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
        const status = apiStatus(e)
        if (status !== undefined && status >= 400 && status < 500 && ![401, 403, 408, 409, 429].includes(status)) {
          this.outbox.update(item.id, { rejected: message, lastError: message })
          this.events.rejected(item, message)
          continue
        }
        // Unreachable, 5xx, auth or rate limits: keep it, try again later.
        this.outbox.update(item.id, { lastError: message })
        this.events.blocked(message)
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
        if (apiStatus(e) === 404) return undefined
        throw e
      })
      if (earlier) {
        this.outbox.remove(item.id)
        this.events.sent(item, earlier, sessionId)
        return
      }
    }
    this.outbox.update(item.id, { attempts: item.attempts + 1 })
    this.events.posting(item)
    try {
      let annotation: Annotation
      try {
        annotation = await this.api.addAnnotation(sessionId, item.body)
      } catch (e) {
        if (apiStatus(e) !== 404) throw e
        // The remembered session is gone (a new store): start a new one for this page.
        this.sessions.forget(item.pageKey)
        sessionId = await this.sessions.ensure(item.pageKey, item.pageTitle)
        annotation = await this.api.addAnnotation(sessionId, item.body)
      }
      this.outbox.remove(item.id)
      this.events.sent(item, annotation, sessionId)
    } finally {
      this.outbox.posted()
    }
  }

  /** An annotation in the session that is this item, stored by an attempt whose answer was lost. */
  private async findEarlierCopy(sessionId: string, item: OutboxItem): Promise<Annotation | undefined> {
    const since = Date.parse(item.queuedAt) - 5 * 60_000 // allow for clock skew between browser and server
    let cursor: string | undefined
    do {
      const page = await this.api.session(sessionId, cursor === undefined ? {} : { cursor })
      const match = page.annotations.find((a) => storedAs(a, item.body) && Date.parse(a.createdAt) >= since)
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
