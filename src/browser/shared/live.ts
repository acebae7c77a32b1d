/**
 * The live event stream (Server-Sent Events) with resume and backoff. It keeps the rev of the
 * last event it saw and reconnects with `?lastEventId=` itself (rather than trusting the
 * browser's own retry, which gives up for good on an HTTP error), so after a server restart it
 * gets exactly the events it missed. A `reset` (the cursor fell out of the server's window) asks
 * the owner to refetch.
 */
import { STORE_EVENT_TYPES } from '../../store/vocabulary.js'
import type { Presence, StoreEvent } from './types.js'
import { readSseBlocks, sseFields } from './sse.js'

export interface LiveHandlers {
  event(event: StoreEvent): void
  /** The server could not resume from our rev: refetch everything (the stream continues live). */
  reset(): void
  presence(presence: Presence): void
  /** Connected (again). */
  open(): void
  /** The connection was lost or could not be made; a reconnect is scheduled. */
  down(): void
  /** An event of the stream's own (not a store event, a reset or presence), by its SSE name. */
  other?(type: string, data: string): void
  /** Given: the server refused the connection (401, 403) and the stream stops instead of retrying. */
  refused?(status: number): void
}

export interface LiveOptions {
  /** First retry delay; doubles up to `maxRetryMs`. */
  retryMs?: number
  maxRetryMs?: number
  /** Request headers (a signed-in person's bearer token), asked for on every (re)connect. */
  headers?: () => Record<string, string>
  /** How the stream is fetched (the extension's service worker; `fetch` by default). */
  transport?: (url: string, init: RequestInit) => Promise<Response>
}

/**
 * Read over `fetch` rather than `EventSource`, so it can send headers (a bearer token
 * never goes in a URL) and see the status of a refused connection.
 */
export class LiveStream {
  private controller: AbortController | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private delay: number
  private stopped = false
  private readonly retryMs: number
  private readonly maxRetryMs: number

  constructor(
    private readonly url: string,
    /** Resume after this rev (the rev the caller's snapshot reflects). */
    private lastRev: number,
    private readonly handlers: LiveHandlers,
    private readonly options: LiveOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000
    this.maxRetryMs = options.maxRetryMs ?? 10_000
    this.delay = this.retryMs
    this.connect()
  }

  get rev(): number {
    return this.lastRev
  }

  /** Reconnect at once if not connected (e.g. the network came back). */
  retryNow(): void {
    if (this.stopped || this.controller) return
    this.delay = this.retryMs
    this.connect()
  }

  close(): void {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.controller?.abort()
    this.controller = undefined
  }

  private connect(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const url = new URL(this.url)
    url.searchParams.set('lastEventId', String(this.lastRev))
    const controller = new AbortController()
    this.controller = controller
    void this.read(url.toString(), controller).then(
      () => this.dropped(controller),
      () => this.dropped(controller),
    )
  }

  private dropped(controller: AbortController): void {
    if (this.controller !== controller) return
    this.controller = undefined
    this.handlers.down()
    if (this.stopped) return
    this.timer = setTimeout(() => this.connect(), this.delay)
    this.delay = Math.min(this.maxRetryMs, this.delay * 2)
  }

  private async read(url: string, controller: AbortController): Promise<void> {
    const response = await (this.options.transport ?? fetch)(url, {
      headers: { Accept: 'text/event-stream', ...(this.options.headers?.() ?? {}) },
      cache: 'no-store',
      credentials: 'omit',
      signal: controller.signal,
    })
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => {})
      if ((response.status === 401 || response.status === 403) && this.handlers.refused && this.controller === controller) {
        this.close()
        this.handlers.refused(response.status)
      }
      return
    }
    if (this.controller !== controller) return
    this.delay = this.retryMs
    this.handlers.open()
    await readSseBlocks(response.body, (block) => {
      if (this.controller !== controller) return false
      this.dispatch(block)
      return true
    })
  }

  /** One SSE frame: `id`, `event` and `data` lines (comments ignored). */
  private dispatch(block: string): void {
    const [id, type, text] = sseFields(block)
    if (text === undefined) return
    if ((STORE_EVENT_TYPES as readonly string[]).includes(type)) {
      const rev = Number(id)
      if (Number.isFinite(rev) && rev <= this.lastRev) return // already seen (a replay overlap)
      let event: StoreEvent
      try {
        event = JSON.parse(text) as StoreEvent
      } catch {
        return
      }
      if (Number.isFinite(rev)) this.lastRev = rev
      this.handlers.event(event)
    } else if (type === 'reset') {
      try {
        const body = JSON.parse(text) as { currentRev?: number }
        if (typeof body.currentRev === 'number') this.lastRev = body.currentRev
      } catch {
        // keep the old rev; the refetch brings the state up to date anyway
      }
      this.handlers.reset()
    } else if (type === 'presence') {
      try {
        this.handlers.presence(JSON.parse(text) as Presence)
      } catch {
        // ignore a malformed presence frame
      }
    } else this.handlers.other?.(type, text)
  }
}
