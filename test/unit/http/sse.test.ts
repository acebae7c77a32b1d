import { describe, expect, it } from 'vitest'
import { connect as netConnect, type Socket } from 'node:net'
import { once } from 'node:events'
import { openStore, type StoreEvent } from '../../../src/index.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { request, serve, SseClient, type SseEvent } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function sse(url: string, headers: Record<string, string> = {}) {
  const client = await SseClient.open(url, headers)
  cleanups.push(() => client.close())
  return client
}

const ids = (events: SseEvent[]) => events.map((e) => Number(e.id))
const hasIds = (n: number) => (events: SseEvent[]) => events.filter((e) => e.id !== undefined && e.event !== 'reset').length >= n

describe('GET /api/events (Server-Sent Events)', () => {
  it('streams every store event with its rev as id and its type as event name, in order', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const client = await sse(`${server.url}/api/events`)
    expect(client.status).toBe(200)
    expect(client.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(client.headers['cache-control']).toContain('no-cache')

    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const created = await request(`${server.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: 'Too much padding' } })
    await store.acknowledge(created.json.id, { message: 'On it' })
    await store.resolve(created.json.id, { summary: 'Done' })

    const events = (await client.until(hasIds(4))).filter((e) => e.id !== undefined)
    expect(ids(events)).toEqual([1, 2, 3, 4])
    expect(events.map((e) => e.event)).toEqual(['session.created', 'annotation.created', 'annotation.status_changed', 'annotation.status_changed'])
    const payloads = events.map((e) => JSON.parse(e.data) as StoreEvent)
    expect(payloads.map((p) => p.rev)).toEqual([1, 2, 3, 4])
    expect(payloads[1]).toMatchObject({ type: 'annotation.created', annotation: { comment: 'Too much padding' } })
    expect(payloads[3]).toMatchObject({ from: 'acknowledged', to: 'resolved' })
  })

  it('the short names /events and /sessions/:id/events are the same streams (resume, session filter, token)', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups, { token: 'tok' })
    const auth = { Authorization: 'Bearer tok' }
    const a = await store.createSession({ url: 'http://localhost:5173/a' })
    const b = await store.createSession({ url: 'http://localhost:5173/b' })
    await store.addAnnotation({ sessionId: a.id, comment: 'in a' })
    await store.addAnnotation({ sessionId: b.id, comment: 'in b' })

    expect((await request(`${server.url}/events`)).status).toBe(401)
    const all = await sse(`${server.url}/events`, { ...auth, 'Last-Event-ID': '2' })
    expect(all.status).toBe(200)
    await all.until(hasIds(2))
    expect(ids(all.storeEvents())).toEqual([3, 4])
    const onlyB = await sse(`${server.url}/sessions/${b.id}/events`, { ...auth, 'Last-Event-ID': '0' })
    await onlyB.until(hasIds(2))
    expect(ids(onlyB.storeEvents())).toEqual([2, 4])
    await store.addAnnotation({ sessionId: b.id, comment: 'live in b' })
    await onlyB.until(hasIds(3))
    expect(ids(onlyB.storeEvents())).toEqual([2, 4, 5])
    await all.until(hasIds(3))
    expect(ids(all.storeEvents())).toEqual([3, 4, 5])
    expect((await request(`${server.url}/sessions/ses_nope/events`, { headers: auth })).status).toBe(404)
    expect((await request(`${server.url}/events`, { method: 'POST', headers: auth, body: {} })).status).toBe(405)
  })

  it('a session stream carries only that session’s events (unknown session: 404)', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const a = await store.createSession({ url: 'http://localhost:5173/a' })
    const b = await store.createSession({ url: 'http://localhost:5173/b' })
    const client = await sse(`${server.url}/api/sessions/${a.id}/events`)
    await store.addAnnotation({ sessionId: b.id, comment: 'in b' })
    await store.addAnnotation({ sessionId: a.id, comment: 'in a' })
    await store.addAnnotation({ sessionId: b.id, comment: 'in b again' })
    await store.addAnnotation({ sessionId: a.id, comment: 'in a again' })
    const events = await client.until(hasIds(2))
    const stored = client.storeEvents()
    expect(stored.map((e) => (JSON.parse(e.data) as { annotation: { comment: string } }).annotation.comment)).toEqual(['in a', 'in a again'])
    expect(ids(stored)).toEqual([4, 6])
    expect(events.every((e) => e.id === undefined || JSON.parse(e.data).sessionId === a.id)).toBe(true)

    const missing = await request(`${server.url}/api/sessions/ses_nope/events`)
    expect(missing.status).toBe(404)
    expect(missing.json.error.code).toBe('NOT_FOUND')
  })

  it('Last-Event-ID resumes across a server restart on the same file: exactly the missed events, then live ones, none twice', async () => {
    const { file } = testDir(cleanups)

    // First server: receive three events.
    const store1 = await openStore({ file })
    const server1 = await serve(store1, [])
    const first = await sse(`${server1.url}/api/events`)
    const session = await request(`${server1.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    const sid = session.json.id as string
    await request(`${server1.url}/api/sessions/${sid}/annotations`, { method: 'POST', body: { comment: 'one' } })
    await request(`${server1.url}/api/sessions/${sid}/annotations`, { method: 'POST', body: { comment: 'two' } })
    await first.until(hasIds(3))
    const lastId = first.storeEvents().at(-1)!.id!
    expect(lastId).toBe('3')

    // Stop: the stream ends, the store is flushed and closed.
    await server1.close()
    await first.ended$()
    await store1.close()

    // Meanwhile (no server running): two more changes.
    const offline = await openStore({ file })
    const three = await offline.addAnnotation({ sessionId: sid, comment: 'three (missed)' })
    await offline.acknowledge(three.id)
    await offline.close()

    // Second server on the same file; reconnect with Last-Event-ID.
    const store2 = await openStore({ file })
    cleanups.push(() => store2.close())
    const server2 = await serve(store2, cleanups)
    const resumed = await sse(`${server2.url}/api/events`, { 'Last-Event-ID': lastId })
    await resumed.until(hasIds(2))
    await request(`${server2.url}/api/sessions/${sid}/annotations`, { method: 'POST', body: { comment: 'four (live)' } })
    await resumed.until(hasIds(3))

    const got = resumed.storeEvents()
    expect(ids(got)).toEqual([4, 5, 6])
    expect(got.map((e) => e.event)).toEqual(['annotation.created', 'annotation.status_changed', 'annotation.created'])
    expect(JSON.parse(got[0]!.data).annotation.comment).toBe('three (missed)')
    expect(JSON.parse(got[2]!.data).annotation.comment).toBe('four (live)')
    // The replay comes before the live presence event and nothing is repeated.
    const order = resumed.events.map((e) => e.event)
    expect(order.indexOf('presence')).toBeGreaterThan(order.indexOf('annotation.status_changed'))
  })

  it('?lastEventId= works like the header; a session stream replays only its session', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const a = await store.createSession({ url: 'http://localhost:5173/a' })
    const b = await store.createSession({ url: 'http://localhost:5173/b' })
    await store.addAnnotation({ sessionId: a.id, comment: 'a1' }) // rev 3
    await store.addAnnotation({ sessionId: b.id, comment: 'b1' }) // rev 4
    await store.addAnnotation({ sessionId: a.id, comment: 'a2' }) // rev 5

    const all = await sse(`${server.url}/api/events?lastEventId=2`)
    await all.until(hasIds(3))
    expect(ids(all.storeEvents())).toEqual([3, 4, 5])

    const onlyA = await sse(`${server.url}/api/sessions/${a.id}/events`, { 'Last-Event-ID': '0' })
    await onlyA.until(hasIds(3))
    expect(ids(onlyA.storeEvents())).toEqual([1, 3, 5])
    await store.addAnnotation({ sessionId: b.id, comment: 'b2' }) // rev 6
    await store.addAnnotation({ sessionId: a.id, comment: 'a3' }) // rev 7
    await onlyA.until(hasIds(4))
    expect(ids(onlyA.storeEvents())).toEqual([1, 3, 5, 7])

    const bad = await request(`${server.url}/api/events`, { headers: { 'Last-Event-ID': 'yesterday' } })
    expect(bad.status).toBe(400)
    expect(bad.json.error).toMatchObject({ code: 'INVALID_PARAMS' })
    expect(bad.json.error.message).toContain('Last-Event-ID')
  })

  it('a Last-Event-ID older than the kept window gets a reset event with oldestRev and currentRev, then live events', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    // The window keeps at least 1 000 events and trims when it doubles: 2 100 mutations push rev 1 out.
    const note = await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    for (let i = 0; i < 2_100; i++) await store.reply(note.id, { author: 'human', message: `m${i}` })
    expect(store.oldestAvailableRev).toBeGreaterThan(1)

    const client = await sse(`${server.url}/api/events`, { 'Last-Event-ID': '1' })
    await client.until((events) => events.some((e) => e.event === 'reset'))
    const reset = client.events.find((e) => e.event === 'reset')!
    expect(JSON.parse(reset.data)).toEqual({ oldestRev: store.oldestAvailableRev + 1, currentRev: store.rev })
    expect(reset.id).toBe(String(store.rev))
    expect(client.storeEvents()).toEqual([])

    const rev = store.rev
    await store.createSession({ url: 'http://localhost:5173/next' })
    await client.until(hasIds(1))
    expect(ids(client.storeEvents())).toEqual([rev + 1])

    // An id from the future (another store) is also a reset.
    const future = await sse(`${server.url}/api/events`, { 'Last-Event-ID': String(store.rev + 50) })
    await future.until((events) => events.some((e) => e.event === 'reset'))
    expect(JSON.parse(future.events.find((e) => e.event === 'reset')!.data)).toMatchObject({ currentRev: store.rev })
  })

  it('sends keepalive comments at the configured interval', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups, { keepAliveMs: 20 })
    const client = await sse(`${server.url}/api/events`)
    await client.waitFor(() => client.comments.filter((c) => c === 'keepalive').length >= 2, 5_000, 'two keepalives')
    expect(client.comments[0]).toBe('marginalia rev 0')
  })

  it('sends the current agent presence on connect', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const client = await sse(`${server.url}/api/events`)
    await client.until((events) => events.some((e) => e.event === 'presence'))
    const presence = client.events.find((e) => e.event === 'presence')!
    expect(presence.id).toBeUndefined()
    expect(JSON.parse(presence.data)).toEqual({ connected: false, sessions: 0, agents: 0, watching: 0 })
  })

  it('disconnects a client that stops reading once its backlog passes the limit; a reading client stays', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups, { sseMaxBufferedBytes: 64 * 1024 })
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const reader = await sse(`${server.url}/api/events`)

    // A raw client that sends the request and then never reads a byte.
    const socket: Socket = netConnect(server.port, '127.0.0.1')
    cleanups.push(() => socket.destroy())
    await once(socket, 'connect')
    socket.pause()
    socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n\r\n`)
    const connected = () => server.stats().eventStreams
    while (connected() < 2) await new Promise((r) => setImmediate(r))

    // Push events (~8 KB each) until the server gives up on the stalled client. The kernel's
    // socket buffers absorb the first few MB; the limit bounds what the server holds beyond that.
    const comment = 'x'.repeat(8_000)
    let sent = 0
    while (connected() === 2 && sent < 5_000) {
      await store.addAnnotation({ sessionId: session.id, comment })
      sent++
      await new Promise((r) => setImmediate(r))
    }
    expect(connected()).toBe(1)
    expect(sent).toBeLessThan(5_000)

    // The reading client got every event, in order.
    await reader.until(hasIds(sent), 10_000)
    expect(ids(reader.storeEvents())).toEqual(Array.from({ length: sent }, (_, i) => i + 2))
    expect(reader.ended).toBe(false)
  })

  it('closing the server ends open event streams', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, [])
    const client = await sse(`${server.url}/api/events`)
    expect(server.stats().eventStreams).toBe(1)
    await server.close()
    await client.ended$()
    expect(server.stats().eventStreams).toBe(0)
  })
})
