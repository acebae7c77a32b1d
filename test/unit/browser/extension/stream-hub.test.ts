/**
 * The extension's shared live stream (src/browser/extension/stream-hub.ts), against a server of
 * the test's own that speaks the stream's format: what it resumes from, what it replays, and which
 * of its streams are open.
 */
import { describe, expect, it } from 'vitest'
import { StreamHub, parseFrame, type Frame, type Subscriber } from '../../../../src/browser/extension/stream-hub.js'
import { eventually } from '../../../helpers/eventually.js'

type Event = { rev: number; type: string; sessionId: string }

/** Every event from the rev after `since` at connect, then live; each stream it serves, open or closed. */
function server() {
  const events: Event[] = []
  const open: { since: number | undefined; push: (e: Event) => void; pushText: (t: string) => void; closed: boolean; end: () => void }[] = []
  let held: Promise<void> | undefined
  let release = (): void => {}
  const encode = (e: Event) => new TextEncoder().encode(`id: ${e.rev}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
  return {
    open,
    openNow: () => open.filter((s) => !s.closed).length,
    emit(type: string, sessionId: string) {
      const e = { rev: events.length + 1, type, sessionId }
      events.push(e)
      for (const s of open) if (!s.closed) s.push(e)
    },
    /** The next streams answer only once `release` is called. */
    hold() {
      held = new Promise((resolve) => (release = resolve))
    },
    release: () => release(),
    presence: () => {
      for (const s of open) if (!s.closed) s.pushText('event: presence\ndata: {"watching":1}\n\n')
    },
    stream: async (since: number | undefined, signal: AbortSignal): Promise<Response> => {
      await held
      let controller!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
      const entry = {
        since,
        closed: false,
        push: (e: Event) => controller.enqueue(encode(e)),
        pushText: (t: string) => controller.enqueue(new TextEncoder().encode(t)),
        end: () => {
          entry.closed = true
          controller.close()
        },
      }
      signal.addEventListener('abort', () => {
        entry.closed = true
        controller.error(new Error('aborted'))
      })
      open.push(entry)
      for (const e of events) if (since === undefined || e.rev > since) entry.push(e)
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } })
    },
  } as const
}

/** A tab: what it was sent (the events' revs and types), and whether its stream ended. */
function tab(keeps: (f: Frame) => boolean = () => true) {
  const got: string[] = []
  const state = { head: 0, ended: false, refused: undefined as number | undefined }
  const sub: Subscriber = {
    keeps,
    head: () => void state.head++,
    send: (text) => {
      const f = parseFrame(text)
      got.push(f.id === undefined ? f.type : `${f.id} ${f.type}`)
    },
    end: () => void (state.ended = true),
    refuse: (status) => void (state.refused = status),
  }
  return { sub, got, state, controller: new AbortController() }
}

describe('the extension\'s shared live stream', () => {
  it('tabs that resume from where the shared stream is join it: one stream to the server, each tab sent what its filter keeps, in order, and a tab joining told where the agents are', async () => {
    const s = server()
    s.emit('session.created', 'ses_a')
    const hub = new StreamHub(s.stream)
    const a = tab((f) => f.data?.sessionId === 'ses_a' || f.type === 'presence')
    const b = tab((f) => f.data?.sessionId === 'ses_b' || f.type === 'presence')
    hub.subscribe(a.sub, 1, a.controller.signal)
    await eventually(() => s.openNow()).toBe(1)
    hub.subscribe(b.sub, 1, b.controller.signal)
    expect(b.state.head).toBe(1)
    s.emit('annotation.created', 'ses_a')
    s.emit('session.created', 'ses_b')
    s.presence()
    s.emit('annotation.created', 'ses_b')
    await eventually(() => b.got).toEqual(['3 session.created', 'presence', '4 annotation.created'])
    expect(a.got).toEqual(['2 annotation.created', 'presence'])
    // A tab that joins later is told where the agents are at once, as a stream of its own would be at its start.
    const c = tab()
    hub.subscribe(c.sub, 4, c.controller.signal)
    expect(c.got).toEqual(['presence'])
    expect(s.open).toHaveLength(1)
    expect(hub.upstreams).toBe(1)
  })

  it('a tab resuming from an older rev reads its own stream from there, then joins the shared one: nothing missed, nothing twice, its own stream closed', async () => {
    const s = server()
    const hub = new StreamHub(s.stream)
    const a = tab()
    hub.subscribe(a.sub, 0, a.controller.signal)
    s.emit('annotation.created', 'ses_a')
    s.emit('annotation.updated', 'ses_a')
    await eventually(() => a.got).toHaveLength(2)
    // The second tab loaded its page at rev 1: it needs rev 2 on.
    const b = tab()
    hub.subscribe(b.sub, 1, b.controller.signal)
    await eventually(() => b.got).toEqual(['2 annotation.updated'])
    await eventually(() => s.openNow()).toBe(1)
    expect(s.open.map((o) => o.since)).toEqual([0, 1])
    s.emit('annotation.deleted', 'ses_a')
    await eventually(() => b.got).toEqual(['2 annotation.updated', '3 annotation.deleted'])
    expect(a.got).toEqual(['1 annotation.created', '2 annotation.updated', '3 annotation.deleted'])
    expect(hub.upstreams).toBe(1)
  })

  it('the stream to the server closes when the last tab leaves; a tab that comes later opens a new one', async () => {
    const s = server()
    const hub = new StreamHub(s.stream)
    const a = tab()
    const b = tab()
    hub.subscribe(a.sub, 0, a.controller.signal)
    await eventually(() => s.openNow()).toBe(1)
    hub.subscribe(b.sub, 0, b.controller.signal)
    a.controller.abort()
    s.emit('annotation.created', 'ses_a')
    await eventually(() => b.got).toEqual(['1 annotation.created'])
    expect(a.got).toEqual([])
    b.controller.abort()
    expect(s.openNow()).toBe(0)
    expect(hub.upstreams).toBe(0)
    const c = tab()
    hub.subscribe(c.sub, 1, c.controller.signal)
    await eventually(() => s.openNow()).toBe(1)
    expect(s.open.at(-1)!.since).toBe(1)
  })

  it('when the server ends the shared stream every tab on it is told (it reconnects from where it was); a tab whose own stream is still coming takes its place', async () => {
    const s = server()
    s.emit('annotation.created', 'ses_a')
    const hub = new StreamHub(s.stream)
    const a = tab()
    hub.subscribe(a.sub, 1, a.controller.signal)
    await eventually(() => s.openNow()).toBe(1)
    // A tab from rev 0: its own stream, whose answer has not come yet.
    s.hold()
    const b = tab()
    hub.subscribe(b.sub, 0, b.controller.signal)
    s.open[0]!.end()
    await eventually(() => a.state.ended).toBe(true)
    s.release()
    await eventually(() => b.got).toEqual(['1 annotation.created'])
    expect(b.state.ended).toBe(false)
    s.emit('annotation.updated', 'ses_a')
    await eventually(() => b.got).toEqual(['1 annotation.created', '2 annotation.updated'])
    // Its stream is the shared one now: a tab from rev 2 joins it.
    const c = tab()
    hub.subscribe(c.sub, 2, c.controller.signal)
    expect(c.state.head).toBe(1)
    expect(s.openNow()).toBe(1)
  })

  it('a refusal of the server is passed on whole, and no stream is kept', async () => {
    const hub = new StreamHub(async () => new Response('{"error":{"code":"UNAUTHORIZED"}}', { status: 401, statusText: 'Unauthorized', headers: { 'Content-Type': 'application/json' } }))
    const a = tab()
    hub.subscribe(a.sub, 0, a.controller.signal)
    await eventually(() => a.state.refused).toBe(401)
    expect(a.state.head).toBe(0)
    expect(hub.upstreams).toBe(0)
  })
})
