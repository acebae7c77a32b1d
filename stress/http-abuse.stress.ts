import { afterEach, expect, it } from 'vitest'
import { request } from '../test/helpers/http.js'
import { tempDir } from '../test/helpers/store.js'
import { abandonedSessions, concurrentCreates, fileServer, hostileRequests, mcpGarbage, slowloris, sseFanOut, stalledClients } from '../test/e2e/reliability/lib/http-abuse.js'
import { startServe } from '../test/e2e/reliability/lib/serve.js'
import { report } from './report.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('http abuse: 5 000 concurrent REST creates on 2 000 connections', async () => {
  const figures = await concurrentCreates({ creates: 5_000, sockets: 2_000 }, cleanups)
  report('http-abuse/creates-5000', figures)
  expect(figures.pagedThrough).toBe(5_000)
})

it('http abuse: 10 000 REST creates on 500 kept-alive connections', async () => {
  const figures = await concurrentCreates({ creates: 10_000, sockets: 500 }, cleanups)
  report('http-abuse/creates-10000', figures)
  expect(figures.pagedThrough).toBe(10_000)
})

it('http abuse: 2 000 event-stream clients × 150 events', async () => {
  const figures = await sseFanOut({ clients: 2_000, events: 150, inFlight: 4 }, cleanups)
  report('http-abuse/sse-2000x150', figures)
  expect(figures.deliveries).toBe(2_000 * 150)
})

it('http abuse: 500 event-stream clients × 1 000 events', async () => {
  const figures = await sseFanOut({ clients: 500, events: 1_000, inFlight: 8 }, cleanups)
  report('http-abuse/sse-500x1000', figures)
  expect(figures.deliveries).toBe(500 * 1_000)
})

it('http abuse: 100 stalled event-stream clients beside 100 readers (64 KiB limit)', async () => {
  const figures = await stalledClients({ stalled: 100, good: 100, maxBufferedBytes: 64 * 1024, eventBytes: 9_000, maxEvents: 10_000 }, cleanups)
  report('http-abuse/stalled-100', figures)
})

it('http abuse: 20 stalled clients at the default 1 MiB limit beside 50 readers', async () => {
  const figures = await stalledClients({ stalled: 20, good: 50, maxBufferedBytes: 1024 * 1024, eventBytes: 9_000, maxEvents: 10_000 }, cleanups)
  report('http-abuse/stalled-20-1MiB', figures)
})

it('http abuse: hostile requests, 10 rounds in-process and 3 against the built CLI', async () => {
  let cases = 0
  for (let round = 0; round < 10; round++) {
    const { store, server } = await fileServer(cleanups, { token: `token-${round}`, maxBodyBytes: 4_096 * (1 + (round % 3)) })
    cases += (await hostileRequests({ url: server.url, port: server.port, token: `token-${round}`, maxBodyBytes: 4_096 * (1 + (round % 3)), rev: async () => store.rev })).length
  }
  for (let round = 0; round < 3; round++) {
    const { file, cleanup } = tempDir('marginalia-abuse-cli-')
    cleanups.push(cleanup)
    const cli = await startServe(file, ['--token', 'cli-token', '--max-body', '8192'], cleanups)
    cases += (await hostileRequests({ url: cli.url, port: cli.port, token: 'cli-token', maxBodyBytes: 8_192, rev: async () => ((await request(`${cli.url}/health`)).json as { rev: number }).rev })).length
    expect(cli.stderr()).not.toMatch(/internal error|request failed/)
    expect(await cli.stop()).toBe(0)
  }
  report('http-abuse/hostile', { cases })
})

it('http abuse: 1 500 slowloris connections (1 s / 2 s timeouts)', async () => {
  const figures = await slowloris({ connections: 1_500, headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 }, cleanups)
  report('http-abuse/slowloris-1500', figures)
})

it('http abuse: 300 slowloris connections against the built CLI (default 10 s / 30 s)', async () => {
  const { file, cleanup } = tempDir('marginalia-abuse-cli-')
  cleanups.push(cleanup)
  const cli = await startServe(file, [], cleanups)
  await request(`${cli.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
  const figures = await slowloris({ connections: 300, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 }, cleanups, {
    url: cli.url,
    port: cli.port,
    rev: async () => ((await request(`${cli.url}/health`)).json as { rev: number }).rev,
  })
  report('http-abuse/slowloris-cli-300', figures)
  expect(await cli.stop()).toBe(0)
})

it('http abuse: MCP garbage, then 3 000 abandoned sessions against the default cap of 100', async () => {
  const { store, server } = await fileServer(cleanups)
  await store.createSession({ url: 'http://localhost:5173/' })
  for (let round = 0; round < 20; round++) await mcpGarbage(server, async () => store.rev)
  const figures = await abandonedSessions({ maxSessions: 100, abandon: 3_000 }, cleanups)
  report('http-abuse/mcp-sessions-3000', figures)
})
