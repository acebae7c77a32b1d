/**
 * HTTP abuse: many concurrent writes, many event-stream clients, clients
 * that stop reading, malformed and hostile requests, slow requests, MCP garbage and abandoned
 * MCP sessions. Each scenario checks what must hold and returns figures; the CI tests and the
 * stress runs call them with different sizes.
 */
import { Agent } from 'node:http'
import type { Socket } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { expect } from 'vitest'
import { openStore, type Annotation, type HttpServer, type HttpServerOptions, type Store } from '../../../../src/index.js'
import { request, serve, SseClient, type Reply } from '../../../helpers/http.js'
import { testDir } from '../../../helpers/store.js'
import { listenOverflows, rawExchange, stalledClient } from './raw.js'
import { startFixtureServer, type MemoryUsage } from './serve.js'
import { type Cleanups } from '../../../helpers/cleanup.js'
import { until } from '../../../helpers/eventually.js'

const MB = 1024 * 1024
const mb = (bytes: number): number => Math.round((bytes / MB) * 100) / 100

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** A file store in a temp dir and startHttpServer on it, in this process; log lines collected. */
export async function fileServer(cleanups: Cleanups, options: HttpServerOptions = {}): Promise<{ store: Store; server: HttpServer; logs: string[] }> {
  const { file } = testDir(cleanups, 'marginalia-abuse-')
  const store = await openStore({ file })
  cleanups.push(() => store.close())
  const logs: string[] = []
  const server = await serve(store, cleanups, { log: (m) => logs.push(m), ...options })
  return { store, server, logs }
}

// ---- 1. many concurrent REST creates ---------------------------------------------------------

export interface CreatesFigures {
  creates: number
  sockets: number
  statuses: Record<string, number>
  finalRev: number
  pagedThrough: number
  pages: number
  latencyMs: { p50: number; p99: number; max: number }
  /** SYNs this machine dropped meanwhile because a listen queue was full (Linux; -1 where unknown). */
  listenOverflows: number
  ms: number
}

/** `creates` POSTs of annotations at once (each on its own connection up to `sockets`), on a file store. */
export async function concurrentCreates(options: { creates: number; sockets: number }, cleanups: Cleanups): Promise<CreatesFigures> {
  const { store, server, logs } = await fileServer(cleanups)
  const session = (await request(`${server.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })).json as { id: string }
  const startRev = store.rev
  const agent = new Agent({ keepAlive: true, maxSockets: options.sockets })
  cleanups.push(() => agent.destroy())
  const overflowsBefore = listenOverflows()
  const started = Date.now()
  const replies = await Promise.all(
    Array.from({ length: options.creates }, async (_, i) => {
      const t0 = Date.now()
      const r = await request(`${server.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: `concurrent ${i}`, intent: 'fix' }, agent, timeoutMs: 120_000 })
      return { r, i, ms: Date.now() - t0 }
    }),
  )
  const ms = Date.now() - started
  const overflowsAfter = listenOverflows()
  const statuses: Record<string, number> = {}
  for (const { r } of replies) statuses[r.status] = (statuses[r.status] ?? 0) + 1
  expect(statuses).toEqual({ 201: options.creates })
  const created = replies.map(({ r, i }) => {
    const a = r.json as Annotation
    expect(a.comment).toBe(`concurrent ${i}`)
    return a
  })
  // Each its own annotation at its own rev; all of them in the store, once.
  expect(new Set(created.map((a) => a.id)).size).toBe(options.creates)
  expect(new Set(created.map((a) => a.rev)).size).toBe(options.creates)
  expect(store.rev).toBe(startRev + options.creates)
  expect(store.pageAnnotations({ sessionId: session.id }).total).toBe(options.creates)
  for (const a of created) expect(store.getAnnotation(a.id).comment).toBe(a.comment)
  // And through the API: paging with limit 500 yields each exactly once.
  const paged: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await request(`${server.url}/api/annotations?sessionId=${session.id}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    expect(page.status).toBe(200)
    expect(page.json.total).toBe(options.creates)
    paged.push(...(page.json.annotations as Annotation[]).map((a) => a.id))
    cursor = page.json.nextCursor as string | undefined
    pages++
  } while (cursor !== undefined && pages < 1_000)
  expect(paged).toHaveLength(options.creates)
  expect(new Set(paged)).toEqual(new Set(created.map((a) => a.id)))
  expect(logs.filter((l) => l.includes('internal error') || l.includes('request failed'))).toEqual([])
  const latencies = replies.map((x) => x.ms).sort((a, b) => a - b)
  return {
    creates: options.creates,
    sockets: options.sockets,
    statuses,
    finalRev: store.rev,
    pagedThrough: paged.length,
    pages,
    latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? 0 },
    listenOverflows: overflowsBefore === undefined || overflowsAfter === undefined ? -1 : overflowsAfter - overflowsBefore,
    ms,
  }
}

// ---- 2. many event-stream clients --------------------------------------------------------------

export interface FanOutFigures {
  clients: number
  events: number
  deliveries: number
  heapMb: { before: number; connected: number; delivered: number; afterClose: number }
  rssMb: { before: number; connected: number; delivered: number; afterClose: number }
  heapPerClientKb: number
  connectMs: number
  deliverMs: number
}

async function post(url: string, body: unknown, agent?: Agent): Promise<Reply> {
  return request(url, { method: 'POST', body, timeoutMs: 60_000, ...(agent ? { agent } : {}) })
}

/** Write `count` annotations over REST, `inFlight` at a time; each must be 201. */
async function postAnnotations(server: { url: string }, sessionId: string, count: number, inFlight: number, comment: (i: number) => string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight })
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      const r = await post(`${server.url}/api/sessions/${sessionId}/annotations`, { comment: comment(i) }, agent)
      expect(r.status).toBe(201)
    }
  }
  try {
    await Promise.all(Array.from({ length: inFlight }, worker))
  } finally {
    agent.destroy()
  }
}

async function openClients(url: string, count: number, cleanups: Cleanups): Promise<SseClient[]> {
  const clients: SseClient[] = []
  for (let at = 0; at < count; at += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, count - at) }, () => SseClient.open(url)))
    for (const c of batch) {
      cleanups.push(() => c.close())
      expect(c.status).toBe(200)
    }
    clients.push(...batch)
  }
  return clients
}

/** Store events a client received, as revs; every one must be an annotation.created. */
function revsOf(client: SseClient): number[] {
  return client.storeEvents().map((e) => Number(e.id))
}

/** `clients` event-stream clients on a server in a child process; `events` annotations written over REST. */
export async function sseFanOut(options: { clients: number; events: number; inFlight: number }, cleanups: Cleanups): Promise<FanOutFigures> {
  const server = await startFixtureServer({ keepAliveMs: 0 }, cleanups)
  const session = (await post(`${server.url}/api/sessions`, { url: 'http://localhost:5173/' })).json as { id: string }
  const before = await server.memory()
  const t0 = Date.now()
  const clients = await openClients(`${server.url}/api/events`, options.clients, cleanups)
  await until(async () => (await server.stats()).eventStreams === options.clients, `${options.clients} open event streams`, 30_000, 20)
  const connectMs = Date.now() - t0
  const connected = await server.memory()

  const t1 = Date.now()
  await postAnnotations(server, session.id, options.events, options.inFlight, (i) => `fan-out ${i} ${'x'.repeat(200)}`)
  const last = String(1 + options.events)
  await until(() => clients.every((c) => c.events.some((e) => e.id === last)), `every client to receive event ${last}`, 120_000, 20)
  const deliverMs = Date.now() - t1
  const delivered = await server.memory()

  // Every client: every event, in rev order, none twice, and still connected.
  const expected = Array.from({ length: options.events }, (_, i) => 2 + i)
  let deliveries = 0
  for (const c of clients) {
    expect(revsOf(c)).toEqual(expected)
    expect(c.storeEvents().every((e) => e.event === 'annotation.created')).toBe(true)
    expect(c.ended).toBe(false)
    deliveries += c.storeEvents().length
  }
  for (const c of clients) c.close()
  await until(async () => (await server.stats()).eventStreams === 0, 'the server to notice every client left', 30_000, 20)
  const afterClose = await server.memory()
  expect(await server.stop()).toBe(0)

  const figures: FanOutFigures = {
    clients: options.clients,
    events: options.events,
    deliveries,
    heapMb: { before: mb(before.heapUsed), connected: mb(connected.heapUsed), delivered: mb(delivered.heapUsed), afterClose: mb(afterClose.heapUsed) },
    rssMb: { before: mb(before.rss), connected: mb(connected.rss), delivered: mb(delivered.rss), afterClose: mb(afterClose.rss) },
    heapPerClientKb: Math.round((connected.heapUsed - before.heapUsed) / options.clients / 102.4) / 10,
    connectMs,
    deliverMs,
  }
  // Memory is bounded: a connected client costs little, and it is all given back when they leave
  // (what stays is the store's own growth: the annotations themselves).
  expect(figures.heapPerClientKb).toBeLessThan(64)
  expect(afterClose.heapUsed - before.heapUsed).toBeLessThan(16 * MB)
  return figures
}

// ---- 3. clients that stop reading ----------------------------------------------------------------

export interface StalledFigures {
  stalled: number
  good: number
  maxBufferedKb: number
  eventBytes: number
  eventsUntilAllDropped: number
  /** What the server would have had to hold for the stalled clients without the limit. */
  owedToStalledMb: number
  heapMb: { before: number; peak: number; after: number }
  rssMb: { before: number; peak: number; after: number }
  ms: number
}

/**
 * `stalled` raw clients open /api/events and never read; `good` clients read. Events of about
 * `eventBytes` are written until the server has dropped every stalled client: the good ones
 * must get every event, the server's memory must stay bounded meanwhile.
 */
export async function stalledClients(
  options: { stalled: number; good: number; maxBufferedBytes: number; eventBytes: number; maxEvents: number },
  cleanups: Cleanups,
): Promise<StalledFigures> {
  const started = Date.now()
  const server = await startFixtureServer({ sseMaxBufferedBytes: options.maxBufferedBytes, keepAliveMs: 0 }, cleanups)
  const session = (await post(`${server.url}/api/sessions`, { url: 'http://localhost:5173/' })).json as { id: string }
  const good = await openClients(`${server.url}/api/events`, options.good, cleanups)
  const stalled: Socket[] = []
  for (let i = 0; i < options.stalled; i++) {
    const socket = await stalledClient(server.port, `GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n\r\n`)
    cleanups.push(() => socket.destroy())
    stalled.push(socket)
  }
  const all = options.good + options.stalled
  await until(async () => (await server.stats()).eventStreams === all, `${all} open event streams`, 30_000, 20)
  const before = await server.memory()
  const peak = { heapUsed: before.heapUsed, rss: before.rss }

  const comment = 'y'.repeat(options.eventBytes)
  let sent = 0
  while (sent < options.maxEvents) {
    await postAnnotations(server, session.id, 10, 2, (i) => `${sent + i} ${comment}`)
    sent += 10
    if (sent % 50 === 0) {
      const m = await server.memory()
      peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed)
      peak.rss = Math.max(peak.rss, m.rss)
    }
    if ((await server.stats()).eventStreams === options.good) break
  }
  const stats = await server.stats()
  expect(stats.eventStreams, `stalled clients still connected after ${sent} events`).toBe(options.good)

  // The readers got everything, in order, once, and are still there.
  const last = String(1 + sent)
  await until(() => good.every((c) => c.events.some((e) => e.id === last)), `every reading client to receive event ${last}`, 60_000, 20)
  const expected = Array.from({ length: sent }, (_, i) => 2 + i)
  for (const c of good) {
    expect(revsOf(c)).toEqual(expected)
    expect(c.ended).toBe(false)
  }
  for (const s of stalled) s.destroy()
  const after = await server.memory()
  const frameBytes = options.eventBytes + 400
  const figures: StalledFigures = {
    stalled: options.stalled,
    good: options.good,
    maxBufferedKb: options.maxBufferedBytes / 1024,
    eventBytes: options.eventBytes,
    eventsUntilAllDropped: sent,
    owedToStalledMb: mb(options.stalled * sent * frameBytes),
    heapMb: { before: mb(before.heapUsed), peak: mb(peak.heapUsed), after: mb(after.heapUsed) },
    rssMb: { before: mb(before.rss), peak: mb(peak.rss), after: mb(after.rss) },
    ms: Date.now() - started,
  }
  // Bounded: at most the limit per stalled client (plus what node's socket buffer holds, which
  // the limit counts) and the store's own growth (the events themselves), far below what was owed.
  const storeGrowth = sent * frameBytes * 2
  expect(peak.heapUsed - before.heapUsed).toBeLessThan(options.stalled * options.maxBufferedBytes * 2 + storeGrowth + 16 * MB)
  expect(await server.stop()).toBe(0)
  return figures
}

// ---- 4. hostile and malformed requests --------------------------------------------------------

export interface HostileCase {
  name: string
  /** The status expected; 'closed' = the connection is closed (with or without a status line). */
  expect: number
  status: number | undefined
}

/**
 * A server with a token and a small body limit, on a file store with one session and one
 * annotation; every hostile request must get its 4xx and change nothing.
 */
export async function hostileRequests(target: { url: string; port: number; token: string; maxBodyBytes: number; rev: () => Promise<number> }): Promise<HostileCase[]> {
  const { url, port, token, maxBodyBytes } = target
  const auth = { Authorization: `Bearer ${token}` }
  const host = `127.0.0.1:${port}`
  const setup = await request(`${url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' }, headers: auth })
  expect(setup.status).toBe(201)
  const sessionId = (setup.json as { id: string }).id
  const annotation = await request(`${url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: 'target' }, headers: auth })
  expect(annotation.status).toBe(201)
  const annotationId = (annotation.json as Annotation).id
  const rev = await target.rev()

  const big = JSON.stringify({ comment: 'z'.repeat(maxBodyBytes) })
  const writes: [string, string][] = [
    ['POST', '/api/sessions'],
    ['POST', `/api/sessions/${sessionId}/annotations`],
    ['POST', `/api/annotations/${annotationId}/replies`],
    ['POST', `/api/annotations/${annotationId}/reopen`],
    ['DELETE', `/api/annotations/${annotationId}`],
  ]
  const raw = (method: string, path: string, headers: string, body = ''): Promise<number | undefined> =>
    rawExchange(port, `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n${headers}\r\n${body}`).then((o) => o.status)
  const cases: HostileCase[] = []
  const check = (name: string, expected: number, status: number | undefined): void => {
    cases.push({ name, expect: expected, status })
  }
  for (const [method, path] of writes) {
    const r = (body: string, headers: Record<string, string> = {}) => request(`${url}${path}`, { method, body, headers: { 'Content-Type': 'application/json', ...auth, ...headers } }).then((x) => x.status)
    check(`${method} ${path}: Content-Length over the limit`, 413, await raw(method, path, `Content-Type: application/json\r\nContent-Length: ${maxBodyBytes * 50}\r\n`))
    check(`${method} ${path}: a body over the limit`, 413, await r(big))
    const chunks = Array.from({ length: 8 }, () => `${(maxBodyBytes / 4).toString(16)}\r\n${'c'.repeat(maxBodyBytes / 4)}\r\n`).join('')
    check(`${method} ${path}: a chunked body over the limit`, 413, await raw(method, path, 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n', `${chunks}0\r\n\r\n`))
    check(`${method} ${path}: malformed JSON`, 400, await r('{"comment": "x", '))
    check(`${method} ${path}: JSON that is not an object`, 400, await r(method === 'DELETE' ? '[1,2]' : '"text"'))
    check(`${method} ${path}: text/plain`, 415, await r('{"comment":"x"}', { 'Content-Type': 'text/plain' }))
    check(`${method} ${path}: form-encoded`, 415, await r('comment=x', { 'Content-Type': 'application/x-www-form-urlencoded' }))
    check(`${method} ${path}: no content type`, 415, await raw(method, path, 'Content-Length: 15\r\n', '{"comment":"x"}'))
    check(`${method} ${path}: foreign Host`, 403, await rawExchange(port, `${method} ${path} HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{"comment":"x"}`).then((o) => o.status))
    check(`${method} ${path}: rebinding Host (evil name, loopback port)`, 403, await rawExchange(port, `${method} ${path} HTTP/1.1\r\nHost: attacker.localhost.evil:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{"comment":"x"}`).then((o) => o.status))
    check(`${method} ${path}: no Host`, 400, await rawExchange(port, `${method} ${path} HTTP/1.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{"comment":"x"}`).then((o) => o.status))
    check(`${method} ${path}: foreign Origin`, 403, await r('{"comment":"x","message":"x","url":"http://x/"}', { Origin: 'https://evil.example' }))
    check(`${method} ${path}: Origin null`, 403, await r('{"comment":"x","message":"x","url":"http://x/"}', { Origin: 'null' }))
    check(`${method} ${path}: no token`, 401, await request(`${url}${path}`, { method, body: { comment: 'x', message: 'x', url: 'http://x/' } }).then((x) => x.status))
    check(`${method} ${path}: wrong token`, 401, await r('{"comment":"x","message":"x","url":"http://x/"}', { Authorization: `Bearer ${token}x` }))
    check(`${method} ${path}: token as Basic`, 401, await r('{"comment":"x","message":"x","url":"http://x/"}', { Authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }))
    check(`${method} ${path}: a query string of 64 KiB`, 431, await raw(method, `${path}?expectedRev=${'9'.repeat(65_536)}`, 'Content-Type: application/json\r\nContent-Length: 2\r\n', '{}'))
    check(`${method} ${path}: a header of 64 KiB`, 431, await raw(method, path, `X-Filler: ${'h'.repeat(65_536)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n`, '{}'))
    check(`${method} ${path}: 5 000 headers`, 431, await raw(method, path, Array.from({ length: 5_000 }, (_, i) => `X-H${i}: ${i}\r\n`).join('') + 'Content-Type: application/json\r\nContent-Length: 2\r\n', '{}'))
  }
  check('unknown route', 404, await request(`${url}/api/nothing/here`, { headers: auth }).then((x) => x.status))
  check('unknown route, POST', 404, await request(`${url}/api/sessions/${sessionId}/nothing`, { method: 'POST', body: {}, headers: auth }).then((x) => x.status))
  check('unknown annotation', 404, await request(`${url}/api/annotations/ann_nope/replies`, { method: 'POST', body: { message: 'x' }, headers: auth }).then((x) => x.status))
  check('a path of 8 KiB', 404, await request(`${url}/api/${'p/'.repeat(4_000)}`, { headers: auth }).then((x) => x.status))
  check('wrong method', 405, await request(`${url}/api/sessions/${sessionId}`, { method: 'PUT', body: {}, headers: auth }).then((x) => x.status))
  check('a malformed percent-encoding in a path parameter', 400, await request(`${url}/api/annotations/%E0%A4%A/replies`, { method: 'POST', body: { message: 'x' }, headers: auth }).then((x) => x.status))
  check('an unknown query parameter', 400, await request(`${url}/api/annotations?${'k'.repeat(8_000)}=1`, { headers: auth }).then((x) => x.status))
  check('a bogus cursor', 400, await request(`${url}/api/annotations?cursor=${'%FF'.repeat(1_000)}`, { headers: auth }).then((x) => x.status))
  check('events: a Last-Event-ID that is not a rev', 400, await request(`${url}/api/events`, { headers: { ...auth, 'Last-Event-ID': '1e9' } }).then((x) => x.status))
  check('events without a token', 401, await request(`${url}/api/events`).then((x) => x.status))
  check('not HTTP at all', 400, await rawExchange(port, 'HELLO THERE\r\n\r\n').then((o) => o.status))
  check('a bad chunk size', 400, await raw('POST', '/api/sessions', 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n'))
  check('Content-Length and Transfer-Encoding both', 400, await raw('POST', '/api/sessions', 'Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n'))
  check('MCP: no token', 401, await request(`${url}/mcp`, { method: 'POST', body: INIT, headers: MCP_ACCEPT }).then((x) => x.status))
  check('MCP: foreign Origin', 403, await request(`${url}/mcp`, { method: 'POST', body: INIT, headers: { ...MCP_ACCEPT, ...auth, Origin: 'https://evil.example' } }).then((x) => x.status))
  check('MCP: a body over the limit', 413, await request(`${url}/mcp`, { method: 'POST', body: { ...INIT, padding: 'p'.repeat(maxBodyBytes) }, headers: { ...MCP_ACCEPT, ...auth } }).then((x) => x.status))

  for (const c of cases) expect(c.status, c.name).toBe(c.expect)
  // Nothing reached the store, and the server still answers.
  expect(await target.rev()).toBe(rev)
  expect((await request(`${url}/api/annotations/${annotationId}`, { headers: auth })).json).toMatchObject({ id: annotationId, status: 'pending', replies: [] })
  return cases
}

// ---- 5. slow requests (slowloris) ---------------------------------------------------------------

export interface SlowFigures {
  connections: number
  answered408: number
  closedWithin: { p50: number; max: number }
  normalRequestMs: number
}

/**
 * `connections` clients that send nothing, trickle headers, or trickle a body, all at once,
 * against a server with the given timeouts: each must be answered 408 and closed within about
 * the timeout, while a normal request is answered at once; nothing is stored.
 */
export async function slowloris(
  options: { connections: number; headersTimeoutMs: number; requestTimeoutMs: number },
  cleanups: Cleanups,
  /** Another server to try (e.g. the built CLI with its default timeouts); by default one in this process with the given timeouts. */
  target?: { url: string; port: number; rev: () => Promise<number> },
): Promise<SlowFigures> {
  let server = target
  if (!server) {
    const local = await fileServer(cleanups, { headersTimeoutMs: options.headersTimeoutMs, requestTimeoutMs: options.requestTimeoutMs })
    await local.store.createSession({ url: 'http://localhost:5173/' })
    server = { url: local.server.url, port: local.server.port, rev: async () => local.store.rev }
  }
  const { port } = server
  const rev = await server.rev()
  const host = `Host: 127.0.0.1:${port}\r\n`
  const waitMs = options.requestTimeoutMs + 20_000
  const times = Math.ceil(waitMs / 200)
  const trickle = (data: string) => Array.from({ length: times }, () => ({ delayMs: 200, data }))
  const kinds = [
    () => rawExchange(port, [], waitMs),
    () => rawExchange(port, [{ delayMs: 0, data: `GET /api/sessions HTTP/1.1\r\n${host}` }, ...trickle('X-Slow: 1\r\n')], waitMs),
    () =>
      rawExchange(
        port,
        [{ delayMs: 0, data: `POST /api/sessions HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"url":"http://x/","name":"` }, ...trickle('n')],
        waitMs,
      ),
  ]
  const slow = Promise.all(Array.from({ length: options.connections }, (_, i) => kinds[i % kinds.length]!()))
  // Meanwhile the server answers everyone else at once.
  await new Promise((r) => setTimeout(r, 100))
  const t0 = Date.now()
  const normal = await request(`${server.url}/health`)
  const normalRequestMs = Date.now() - t0
  expect(normal.status).toBe(200)
  const outcomes = await slow
  const kept = outcomes.map((o, i) => ({ ...o, kind: ['nothing sent', 'headers trickled', 'body trickled'][i % kinds.length] })).filter((o) => o.closedAfterMs === undefined || o.status !== 408)
  expect(kept.length, `slow connections not answered 408 and closed: ${JSON.stringify(kept.slice(0, 5))}`).toBe(0)
  const closed = outcomes.map((o) => o.closedAfterMs!).sort((a, b) => a - b)
  // Closed after the limit (not before) and well before node's defaults (60 s / 5 min).
  expect(closed[0]).toBeGreaterThanOrEqual(options.headersTimeoutMs - 50)
  expect(closed.at(-1)).toBeLessThan(options.requestTimeoutMs + 10_000)
  expect(await server.rev()).toBe(rev)
  return {
    connections: options.connections,
    answered408: outcomes.filter((o) => o.status === 408).length,
    closedWithin: { p50: percentile(closed, 50), max: closed.at(-1) ?? 0 },
    normalRequestMs,
  }
}

// ---- 6. MCP abuse --------------------------------------------------------------------------------

const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' }
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abuse', version: '1' } },
}

/** initialize + notifications/initialized, then walk away (no DELETE). Returns the session id. */
export async function abandonedSession(mcpUrl: string, headers: Record<string, string> = {}): Promise<Reply & { sessionId: string }> {
  const init = await request(mcpUrl, { method: 'POST', headers: { ...MCP_ACCEPT, ...headers }, body: INIT })
  const sessionId = init.headers['mcp-session-id'] as string
  if (init.status === 200) {
    const note = await request(mcpUrl, { method: 'POST', headers: { ...MCP_ACCEPT, ...headers, 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-06-18' }, body: { jsonrpc: '2.0', method: 'notifications/initialized' } })
    expect(note.status).toBe(202)
  }
  return { ...init, sessionId }
}

export interface McpGarbageCase {
  name: string
  status: number
  code?: number
}

/** Malformed JSON-RPC, garbage batches, unknown session ids: each a 4xx with a JSON-RPC error; nothing stored. */
export async function mcpGarbage(server: { mcpUrl: string }, rev: () => Promise<number>): Promise<McpGarbageCase[]> {
  const revBefore = await rev()
  const { sessionId } = await abandonedSession(server.mcpUrl)
  const inSession = { ...MCP_ACCEPT, 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-06-18' }
  const send = async (name: string, body: unknown, headers: Record<string, string> = inSession, method = 'POST'): Promise<McpGarbageCase> => {
    const r = await request(server.mcpUrl, { method, headers: { 'Content-Type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) })
    const code = (r.json as { error?: { code?: number } } | undefined)?.error?.code
    return { name, status: r.status, ...(code !== undefined ? { code } : {}) }
  }
  const cases = [
    await send('not JSON', '{"jsonrpc":"2.0",'),
    await send('JSON but not JSON-RPC', { hello: 'world' }),
    await send('JSON-RPC without a method', { jsonrpc: '2.0', id: 1 }),
    await send('null', 'null'),
    await send('a number', '42'),
    await send('a batch of garbage', [1, 'two', null, {}, [], { jsonrpc: '1.0' }]),
    await send('a batch of 1 000 pings', Array.from({ length: 1_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
    await send('a mutating tool call with a wrong jsonrpc version', { jsonrpc: '1.0', id: 2, method: 'tools/call', params: { name: 'acknowledge', arguments: { id: 'x' } } }),
    await send('initialize again in a session', INIT),
    await send('an initialize batched with garbage, no session', [INIT, 1, 'x'], MCP_ACCEPT),
    await send('no session id, not initialize', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, MCP_ACCEPT),
    await send('an unknown session id', { jsonrpc: '2.0', id: 4, method: 'ping' }, { ...inSession, 'Mcp-Session-Id': '00000000-0000-4000-8000-000000000000' }),
    await send('a session id of 8 KiB', { jsonrpc: '2.0', id: 5, method: 'ping' }, { ...inSession, 'Mcp-Session-Id': 's'.repeat(8_192) }),
    await send('GET with an unknown session id', undefined, { Accept: 'text/event-stream', 'Mcp-Session-Id': 'nope' }, 'GET'),
    await send('DELETE with an unknown session id', undefined, { 'Mcp-Session-Id': 'nope' }, 'DELETE'),
    await send('no Accept', { jsonrpc: '2.0', id: 6, method: 'ping' }, { 'Mcp-Session-Id': sessionId }),
    await send('PUT', INIT, MCP_ACCEPT, 'PUT'),
  ]
  const expected: Record<string, number> = {
    'not JSON': 400,
    'JSON but not JSON-RPC': 400,
    'JSON-RPC without a method': 400,
    null: 400,
    'a number': 400,
    'a batch of garbage': 400,
    'a batch of 1 000 pings': 400,
    'a mutating tool call with a wrong jsonrpc version': 400,
    'initialize again in a session': 400,
    'an initialize batched with garbage, no session': 400,
    'no session id, not initialize': 400,
    'an unknown session id': 404,
    'a session id of 8 KiB': 404,
    'GET with an unknown session id': 404,
    'DELETE with an unknown session id': 404,
    'no Accept': 406,
    PUT: 405,
  }
  for (const c of cases) {
    expect(c.status, c.name).toBe(expected[c.name])
    expect(c.code, `${c.name}: a JSON-RPC error body`).toBeLessThan(0)
  }
  // The session is still usable, and nothing was stored.
  const ping = await request(server.mcpUrl, { method: 'POST', headers: inSession, body: { jsonrpc: '2.0', id: 9, method: 'ping' } })
  expect(ping.status).toBe(200)
  expect(ping.text).toContain('"result":{}')
  expect(await rev()).toBe(revBefore)
  return cases
}

export interface SessionFigures {
  maxSessions: number
  abandoned: number
  refusedInitializes: number
  maxSeenSessions: number
  heapMb: { before: number; atCap: number; after: number }
  busyRefusal: string
  ms: number
}

/**
 * `abandon` sessions opened and left (no DELETE) on a server capped at `maxSessions`: the count
 * never passes the cap, memory stays flat once it is reached, the server keeps accepting new
 * sessions (the idle ones make room); with every session busy (a stream open), initialize is
 * 503 with a clear message until one is free; a real client works throughout.
 */
export async function abandonedSessions(options: { maxSessions: number; abandon: number }, cleanups: Cleanups): Promise<SessionFigures> {
  const started = Date.now()
  const server = await startFixtureServer({ maxMcpSessions: options.maxSessions, keepAliveMs: 0 }, cleanups)
  const before = await server.memory()
  let maxSeen = 0
  let refused = 0
  let atCap: MemoryUsage | undefined
  for (let i = 0; i < options.abandon; i++) {
    const s = await abandonedSession(server.mcpUrl)
    if (s.status !== 200) refused++
    if (i % 25 === 24 || i === options.abandon - 1) maxSeen = Math.max(maxSeen, (await server.stats()).mcpSessions)
    if (i + 1 === options.maxSessions) atCap = await server.memory()
    // Some that never get as far as a session: no Accept, or garbage alongside initialize.
    if (i % 10 === 0) expect((await request(server.mcpUrl, { method: 'POST', body: INIT })).status).toBe(406)
    if (i % 10 === 5) expect((await request(server.mcpUrl, { method: 'POST', headers: MCP_ACCEPT, body: [INIT, 'x'] })).status).toBe(400)
  }
  expect(refused).toBe(0) // idle sessions make room for new ones
  expect(maxSeen).toBeLessThanOrEqual(options.maxSessions)
  expect((await server.stats()).mcpSessions).toBe(options.maxSessions)
  const after = await server.memory()
  if (!atCap) throw new Error('abandon must be at least maxSessions')
  // Flat once the cap is reached: the sessions it made room for cost nothing once they are gone.
  expect(after.heapUsed - atCap.heapUsed).toBeLessThan(4 * MB)

  // Every session busy: a GET stream open on each of them.
  const busy: { close: () => void }[] = []
  const fill = options.maxSessions
  for (let i = 0; i < fill; i++) {
    const s = await abandonedSession(server.mcpUrl)
    expect(s.status).toBe(200)
    const stream = await SseClient.open(server.mcpUrl, { 'Mcp-Session-Id': s.sessionId, 'Mcp-Protocol-Version': '2025-06-18' })
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
    busy.push(stream)
  }
  const full = await request(server.mcpUrl, { method: 'POST', headers: MCP_ACCEPT, body: INIT })
  expect(full.status).toBe(503)
  expect(full.headers['retry-after']).toBe('5')
  const busyRefusal = (full.json as { error: { message: string } }).error.message
  expect(busyRefusal).toMatch(new RegExp(`Too many MCP sessions: all ${options.maxSessions} are in use`))
  // One stream closes: its session is idle, and the next client gets in.
  busy.pop()!.close()
  await until(async () => (await request(server.mcpUrl, { method: 'POST', headers: MCP_ACCEPT, body: INIT })).status === 200, 'a free place after a stream closed', 10_000, 20)
  for (const b of busy) b.close()

  // A real client still works.
  const client = new Client({ name: 'after-abuse', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
  cleanups.push(() => client.close())
  expect((await client.listTools()).tools.length).toBeGreaterThan(10)
  await client.close()
  expect(await server.stop()).toBe(0)
  return {
    maxSessions: options.maxSessions,
    abandoned: options.abandon,
    refusedInitializes: refused,
    maxSeenSessions: maxSeen,
    heapMb: { before: mb(before.heapUsed), atCap: mb(atCap.heapUsed), after: mb(after.heapUsed) },
    busyRefusal,
    ms: Date.now() - started,
  }
}
