/**
 * The live event stream (Server-Sent Events) with resume and backoff. It keeps the rev of the
 * last event it saw and reconnects with `?lastEventId=` itself (rather than trusting the
 * browser's own retry, which gives up for good on an HTTP error), so after a server restart it
 * gets exactly the events it missed. A `reset` (the cursor fell out of the server's window) asks
 * the owner to refetch.
 */
import { STORE_EVENT_TYPES } from '../../store/vocabulary.js'
import type { Presence, StoreEvent } from './types.js'

export interface LiveHandlers {
  event(event: StoreEvent): void
  /** The server could not resume from our rev: refetch everything (the stream continues live). */
  reset(): void
  presence(presence: Presence): void
  /** Connected (again). */
  open(): void
  /** The connection was lost or could not be made; a reconnect is scheduled. */
  down(): void
}

export interface LiveOptions {
  /** First retry delay; doubles up to `maxRetryMs`. */
  retryMs?: number
  maxRetryMs?: number
}

export class LiveStream {
  private source: EventSource | undefined
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
    options: LiveOptions = {},
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
    if (this.stopped || this.source) return
    this.delay = this.retryMs
    this.connect()
  }

  close(): void {
    this.stopped = true
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.source?.close()
    this.source = undefined
  }

  private connect(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const url = new URL(this.url)
    url.searchParams.set('lastEventId', String(this.lastRev))
    const source = new EventSource(url.toString())
    this.source = source
    source.onopen = () => {
      this.delay = this.retryMs
      this.handlers.open()
    }
    source.onerror = () => {
      if (this.source !== source) return
      source.close()
      this.source = undefined
      this.handlers.down()
      if (this.stopped) return
      this.timer = setTimeout(() => this.connect(), this.delay)
      this.delay = Math.min(this.maxRetryMs, this.delay * 2)
    }
    for (const type of STORE_EVENT_TYPES) {
      source.addEventListener(type, (m) => {
        const rev = Number(m.lastEventId)
        if (Number.isFinite(rev) && rev <= this.lastRev) return // already seen (a replay overlap)
        let event: StoreEvent
        try {
          event = JSON.parse(m.data as string) as StoreEvent
        } catch {
          return
        }
        if (Number.isFinite(rev)) this.lastRev = rev
        this.handlers.event(event)
      })
    }
    source.addEventListener('reset', (m) => {
      try {
        const data = JSON.parse(m.data as string) as { currentRev?: number }
        if (typeof data.currentRev === 'number') this.lastRev = data.currentRev
      } catch {
        // keep the old rev; the refetch below brings the state up to date anyway
      }
      this.handlers.reset()
    })
    source.addEventListener('presence', (m) => {
      try {
        this.handlers.presence(JSON.parse(m.data as string) as Presence)
      } catch {
        // ignore a malformed presence frame
      }
    })
  }
}
