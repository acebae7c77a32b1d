/**
 * Server-Sent Events: the store's events, each with its `rev` as the SSE id and its type as the
 * SSE event name. A client that reconnects with Last-Event-ID gets exactly what it missed (from
 * the store's persisted event window), then live events, in rev order, none twice; a cursor
 * older than the window gets a `reset` event (refetch, then continue live).
 *
 * Memory stays bounded per client: frames wait in a queue only while the socket is
 * back-pressured; a client whose backlog passes `maxBufferedBytes` is disconnected. The replay
 * is written lazily, as the socket drains, so a long replay never counts as a slow client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Observable, Subscription } from 'rxjs'
import { CursorExpiredError, ValidationError } from '../store/errors.js'
import type { StoreEvent } from '../store/events.js'
import type { Store } from '../store/store.js'
import type { Presence } from './presence.js'

export const DEFAULT_SSE_KEEPALIVE_MS = 15_000

export interface EventStreamOptions {
  store: Store
  /** Only events of this session. */
  sessionId?: string
  /** The client's last seen rev (Last-Event-ID): replay everything after it first. */
  since?: number
  presence$?: Observable<Presence>
  keepAliveMs: number
  maxBufferedBytes: number
  /** Extra response headers (CORS). */
  headers?: Record<string, string>
  /** Frames written first, before the replay (what the stream's route says of the state now). */
  first?: string
  /** On a session's stream, events outside the session that go to the client too, live and replayed. */
  also?: (event: StoreEvent) => boolean
  /** Events this client may not see (left out live and in the replay). */
  hide?: (event: StoreEvent) => boolean
  /** Called once when the stream ends, with why. */
  onClose?: (reason: 'client' | 'slow' | 'server' | 'store') => void
}

interface Frame {
  text: string
  bytes: number
  rev?: number
  /** A reset: the stream goes on from this rev (whatever it was before). */
  resetTo?: number
}

/** Parse a Last-Event-ID value: undefined when absent or empty; an integer ≥ 0; anything else is invalid. */
export function parseLastEventId(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const v = value.trim()
  if (!/^\d{1,15}$/.test(v)) throw new ValidationError([{ path: field, message: 'must be a store rev (an integer ≥ 0)' }])
  return Number(v)
}

function eventFrame(event: StoreEvent): string {
  return `id: ${event.rev}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

function frame(text: string, rev?: number): Frame {
  return rev === undefined ? { text, bytes: Buffer.byteLength(text) } : { text, bytes: Buffer.byteLength(text), rev }
}

export class EventStream {
  private readonly replay: StoreEvent[] = []
  private replayAt = 0
  private readonly queue: Frame[] = []
  private queuedBytes = 0
  private lastRev: number
  private waitingForDrain = false
  private closed = false
  private readonly subscriptions: Subscription[] = []
  private keepAlive: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    this.lastRev = options.since ?? options.store.rev
  }

  /** Write the headers, the replay (or a reset), then follow live events until either side closes. */
  start(): void {
    const { store, sessionId, since } = this.options
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...this.options.headers,
    })
    this.res.on('close', () => this.close('client'))
    this.req.on('error', () => this.close('client'))

    // Subscribe before reading the log: anything committed from here on is queued, and the
    // rev filter in pump() drops whatever the replay already covered.
    this.subscriptions.push(
      store.changes$.subscribe({
        next: (event) => {
          if ((sessionId === undefined || event.sessionId === sessionId || this.options.also?.(event) === true) && !this.hidden(event)) this.push(frame(eventFrame(event), event.rev))
        },
        complete: () => this.close('store'),
      }),
    )
    // The store was reloaded in place (recovery after a refused event): the client refetches.
    this.subscriptions.push(
      store.resets$.subscribe((r) => {
        const text = `id: ${r.rev}\nevent: reset\ndata: ${JSON.stringify({ currentRev: r.rev, reason: r.reason })}\n\n`
        this.push({ ...frame(text), resetTo: r.rev })
      }),
    )
    if (this.closed) return
    this.res.write(`: marginalia rev ${store.rev}\n\n`)
    if (this.options.first) this.res.write(this.options.first)

    if (since !== undefined) {
      try {
        if (since > store.rev) throw new CursorExpiredError(since, store.oldestAvailableRev + 1, store.rev)
        const also = this.options.also
        const replayed = sessionId === undefined ? store.changesSince(since) : also ? store.changesSince(since).filter((e) => e.sessionId === sessionId || also(e)) : store.changesSince(since, { sessionId })
        for (const event of replayed) if (!this.hidden(event)) this.replay.push(event)
      } catch (e) {
        if (!(e instanceof CursorExpiredError)) throw e
        // Too old (or from another store): tell the client to refetch; continue live from now.
        const data = { oldestRev: e.oldestRev, currentRev: e.currentRev }
        this.lastRev = e.currentRev
        this.res.write(`id: ${e.currentRev}\nevent: reset\ndata: ${JSON.stringify(data)}\n\n`)
      }
    }

    if (this.options.presence$) {
      this.subscriptions.push(this.options.presence$.subscribe((p) => this.push(frame(`event: presence\ndata: ${JSON.stringify(p)}\n\n`))))
    }
    if (this.options.keepAliveMs > 0) {
      this.keepAlive = setInterval(() => this.push(frame(': keepalive\n\n')), this.options.keepAliveMs)
      this.keepAlive.unref()
    }
    this.pump()
  }

  private hidden(event: StoreEvent): boolean {
    return this.options.hide?.(event) === true
  }

  /** End the stream (server shutdown). */
  end(): void {
    this.close('server')
  }

  private push(f: Frame): void {
    if (this.closed) return
    this.queue.push(f)
    this.queuedBytes += f.bytes
    if (this.queuedBytes + this.res.writableLength > this.options.maxBufferedBytes) {
      this.close('slow')
      return
    }
    this.pump()
  }

  private pump(): void {
    while (!this.closed && !this.waitingForDrain) {
      let next: Frame | undefined
      if (this.replayAt < this.replay.length) {
        const event = this.replay[this.replayAt++]!
        next = frame(eventFrame(event), event.rev)
      } else if (this.queue.length > 0) {
        next = this.queue.shift()!
        this.queuedBytes -= next.bytes
      } else {
        break
      }
      if (next.resetTo !== undefined) this.lastRev = next.resetTo
      else if (next.rev !== undefined) {
        if (next.rev <= this.lastRev) continue
        this.lastRev = next.rev
      }
      if (!this.res.write(next.text)) {
        this.waitingForDrain = true
        this.res.once('drain', () => {
          this.waitingForDrain = false
          this.pump()
        })
      }
    }
    if (this.replayAt > 0 && this.replayAt === this.replay.length) {
      this.replay.length = 0
      this.replayAt = 0
    }
  }

  private close(reason: 'client' | 'slow' | 'server' | 'store'): void {
    if (this.closed) return
    this.closed = true
    for (const s of this.subscriptions) s.unsubscribe()
    if (this.keepAlive) clearInterval(this.keepAlive)
    this.queue.length = 0
    this.queuedBytes = 0
    this.replay.length = 0
    if (reason === 'slow') this.res.destroy()
    else if (!this.res.writableEnded) this.res.end()
    this.options.onClose?.(reason)
  }
}
