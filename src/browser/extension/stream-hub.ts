import { readSseBlocks, sseFields } from '../shared/sse.js'

/**
 * One live stream from the extension's service worker to the server, shared by every tab: each
 * tab's overlay asks for its own (its session's events, or a new session of its site), and a
 * browser keeps at most six HTTP/1.1 connections to one server, so a stream a tab would leave
 * the seventh tab — and every request of every tab — waiting for a connection.
 *
 * The shared stream is the server's stream of every event (`/api/events`), and each tab gets the
 * frames its filter keeps (`Subscriber.keeps`). A tab that asks to resume from a rev the shared
 * stream has passed reads a stream of its own from there, and joins the shared one as soon as
 * that has caught up (then it is closed): nothing is missed, and nothing is told twice (a tab is
 * sent a frame with an id only when that id is newer than the last it was sent). A tab that asks
 * from a rev the shared stream has reached joins it at once, told where the agents are (as the
 * server tells each stream it starts). With no shared stream, the first
 * tab's own stream becomes it. When the shared stream ends, every tab on it is told the end and
 * reconnects from where it was, as it would from a stream of its own.
 */

/** One frame of the server's stream: its text as sent, its id (a store rev), its event type and its data. */
export interface Frame {
  readonly text: string
  readonly id: number | undefined
  readonly type: string
  readonly data: Record<string, unknown> | undefined
  /** It has data lines (a frame with none is a comment or a keep-alive). */
  readonly hasData: boolean
}

/** A tab's stream, as the worker answers it. */
export interface Subscriber {
  /** Whether this tab is sent `frame`. */
  keeps(frame: Frame): boolean
  /** The answer's head, once, before any frame. */
  head(status: number, statusText: string, contentType: string): void
  send(text: string): void
  /** The stream ended: the tab reconnects from the last id it was sent. */
  end(): void
  /** The server refused (or could not be reached): its answer, whole. */
  refuse(status: number, statusText: string, text: string, contentType: string): void
}

/** The server's stream of every event from `lastEventId` (undefined: from now). */
export type OpenStream = (lastEventId: number | undefined, signal: AbortSignal) => Promise<Response>

interface Member {
  readonly sub: Subscriber
  /** The newest id this tab was sent, or asked to resume after. */
  lastId: number | undefined
}

/** One upstream stream and the tabs it serves. */
interface Pipe {
  readonly controller: AbortController
  readonly members: Set<Member>
  /** The newest id this stream has read (or the rev it was opened after). */
  position: number | undefined
  /** The server has answered it: it may be the shared stream. */
  ready: boolean
  /** The newest presence frame it read: told to a tab that joins it (the server tells it at each stream's start). */
  presence: Frame | undefined
}

const SSE = 'text/event-stream'

/** A frame as the server sent it (`text`, its blank line included), with its fields read. */
export function parseFrame(text: string): Frame {
  const [id, type, raw] = sseFields(text)
  const n = id === undefined ? Number.NaN : Number(id)
  let data: Record<string, unknown> | undefined
  if (raw !== undefined) {
    try {
      const v = JSON.parse(raw) as unknown
      if (typeof v === 'object' && v !== null) data = v as Record<string, unknown>
    } catch {
      // not JSON: no data to filter on
    }
  }
  return { text, id: Number.isSafeInteger(n) ? n : undefined, type, data, hasData: raw !== undefined }
}

export class StreamHub {
  private shared: Pipe | undefined

  constructor(private readonly open: OpenStream) {}

  /** Streams open now to the server (the shared one and those catching up): for tests and the worker's own checks. */
  get upstreams(): number {
    return this.pipes.size
  }

  private readonly pipes = new Set<Pipe>()

  /** A tab's stream from `since` (undefined: from now), until `signal` aborts (the tab went away). */
  subscribe(sub: Subscriber, since: number | undefined, signal: AbortSignal): void {
    const member: Member = { sub, lastId: since }
    const shared = this.shared
    if (shared && (since === undefined || (shared.position !== undefined && since >= shared.position))) {
      sub.head(200, 'OK', SSE)
      shared.members.add(member)
      if (shared.presence && sub.keeps(shared.presence)) sub.send(shared.presence.text)
    } else void this.openFor(member, since)
    signal.addEventListener('abort', () => this.leave(member), { once: true })
  }

  private leave(member: Member): void {
    for (const pipe of this.pipes) {
      if (!pipe.members.delete(member) || pipe.members.size > 0) continue
      this.close(pipe)
    }
  }

  private close(pipe: Pipe): void {
    this.pipes.delete(pipe)
    if (this.shared === pipe) this.shared = undefined
    pipe.controller.abort()
  }

  /** A stream of the tab's own from `since`: the shared one when there is none, else until it has caught up with it. */
  private async openFor(member: Member, since: number | undefined): Promise<void> {
    const pipe: Pipe = { controller: new AbortController(), members: new Set([member]), position: since, ready: false, presence: undefined }
    this.pipes.add(pipe)
    let response: Response
    try {
      response = await this.open(since, pipe.controller.signal)
    } catch (e) {
      this.pipes.delete(pipe)
      if (pipe.members.size > 0) member.sub.refuse(502, 'Bad Gateway', JSON.stringify({ error: { code: 'UNREACHABLE', message: e instanceof Error ? e.message : String(e) } }), 'application/json; charset=utf-8')
      return
    }
    if (pipe.members.size === 0) return void this.close(pipe) // the tab went away meanwhile
    if (!response.ok || !response.body) {
      this.pipes.delete(pipe)
      const text = await response.text().catch(() => '')
      return member.sub.refuse(response.status, response.statusText, text, response.headers.get('content-type') ?? '')
    }
    member.sub.head(response.status, response.statusText, response.headers.get('content-type') ?? SSE)
    pipe.ready = true
    this.settle(pipe)
    await this.pump(pipe, response.body)
  }

  /** A stream that is not the shared one: it becomes it when there is none, or hands its tabs to it once it has read as far. */
  private settle(pipe: Pipe): void {
    if (this.shared === pipe || !this.pipes.has(pipe) || !pipe.ready) return
    const shared = this.shared
    if (!shared) {
      this.shared = pipe
      return
    }
    if (pipe.position === undefined || shared.position === undefined || pipe.position < shared.position) return
    for (const m of pipe.members) shared.members.add(m)
    pipe.members.clear()
    this.close(pipe)
  }

  private async pump(pipe: Pipe, body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      await readSseBlocks(body, (block) => {
        this.deliver(pipe, parseFrame(`${block}\n\n`))
        return this.pipes.has(pipe)
      })
    } catch {
      // aborted (its tabs went away, or they joined the shared stream), or the connection broke
    }
    if (!this.pipes.has(pipe)) return
    this.pipes.delete(pipe)
    if (this.shared === pipe) this.shared = undefined
    for (const m of pipe.members) m.sub.end()
    pipe.members.clear()
    // Streams catching up with this one: one of them takes its place.
    for (const other of this.pipes) this.settle(other)
  }

  private deliver(pipe: Pipe, frame: Frame): void {
    if (frame.id !== undefined) pipe.position = frame.id
    else if (frame.type === 'presence') pipe.presence = frame
    for (const m of pipe.members) {
      // A reset is always told (the tab reloads); another frame with an id only once.
      if (frame.id !== undefined && frame.type !== 'reset' && m.lastId !== undefined && frame.id <= m.lastId) continue
      if (frame.id !== undefined) m.lastId = frame.id
      if (m.sub.keeps(frame)) m.sub.send(frame.text)
    }
    if (frame.id !== undefined) this.settle(pipe)
  }
}
