/**
 * HTTP abuse, CI sizes: concurrent writes, many event-stream clients,
 * clients that stop reading, hostile and malformed requests (in-process and against the built
 * CLI), slow requests, MCP garbage and abandoned MCP sessions. Loopback only.
 * The heavier versions are in stress/http-abuse.stress.ts.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { request, SseClient } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import {
  abandonedSession,
  abandonedSessions,
  concurrentCreates,
  fileServer,
  hostileRequests,
  mcpGarbage,
  slowloris,
  sseFanOut,
  stalledClients,
} from './lib/http-abuse.js'
import { startServe } from './lib/serve.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

describe('HTTP abuse: load', () => {
  it('1 000 concurrent REST creates, each on its own connection: all 201, all stored once (store and GET paging), no 5xx', async () => {
    const figures = await concurrentCreates({ creates: 1_000, sockets: 1_000 }, cleanups)
    console.log(`abuse/creates: ${JSON.stringify(figures)}`)
    expect(figures.pagedThrough).toBe(1_000)
  }, 120_000)

  it('500 event-stream clients: every event to every client, in order, none twice; server memory bounded and given back', async () => {
    const figures = await sseFanOut({ clients: 500, events: 60, inFlight: 4 }, cleanups)
    console.log(`abuse/sse-fan-out: ${JSON.stringify(figures)}`)
    expect(figures.deliveries).toBe(500 * 60)
  }, 120_000)

  it('event-stream clients that never read are disconnected (small sseMaxBufferedBytes); readers get everything; memory bounded', async () => {
    const figures = await stalledClients({ stalled: 20, good: 30, maxBufferedBytes: 32 * 1024, eventBytes: 8_000, maxEvents: 4_000 }, cleanups)
    console.log(`abuse/stalled: ${JSON.stringify(figures)}`)
    expect(figures.owedToStalledMb).toBeGreaterThan(figures.heapMb.peak - figures.heapMb.before)
  }, 120_000)
})

describe('HTTP abuse: hostile requests get the right 4xx and change nothing', () => {
  it('in-process server with a token and a 4 KiB body limit: oversized, chunked, bad JSON, wrong type, foreign Host/Origin, no token, unknown routes, huge query/headers', async () => {
    const { store, server } = await fileServer(cleanups, { token: 's3cret-token', maxBodyBytes: 4_096 })
    const cases = await hostileRequests({ url: server.url, port: server.port, token: 's3cret-token', maxBodyBytes: 4_096, rev: async () => store.rev })
    console.log(`abuse/hostile (in-process): ${cases.length} cases`)
    expect(cases.length).toBeGreaterThan(100)
  }, 60_000)

  it('the same against the built CLI (marginalia serve --token --max-body)', async () => {
    const { file } = testDir(cleanups, 'marginalia-abuse-cli-')
    const cli = await startServe(file, ['--token', 'cli-token', '--max-body', '4096'], cleanups)
    const cases = await hostileRequests({
      url: cli.url,
      port: cli.port,
      token: 'cli-token',
      maxBodyBytes: 4_096,
      rev: async () => ((await request(`${cli.url}/health`)).json as { rev: number }).rev,
    })
    console.log(`abuse/hostile (CLI): ${cases.length} cases`)
    expect(cli.stderr()).not.toMatch(/internal error|request failed/)
    expect(await cli.stop()).toBe(0)
  }, 60_000)

  it('slowloris: 150 connections that send nothing, trickle headers or trickle a body get 408 and are closed at the timeouts; others are served meanwhile', async () => {
    const figures = await slowloris({ connections: 150, headersTimeoutMs: 500, requestTimeoutMs: 1_000 }, cleanups)
    console.log(`abuse/slowloris: ${JSON.stringify(figures)}`)
    expect(figures.answered408).toBe(150)
  }, 60_000)

  it('the request timeouts do not cut responses that stream: an event stream and a waiting MCP call outlive them', async () => {
    const { store, server } = await fileServer(cleanups, { headersTimeoutMs: 200, requestTimeoutMs: 400 })
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const events = await SseClient.open(`${server.url}/api/events`)
    cleanups.push(() => events.close())
    const client = new Client({ name: 'slow-agent', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => client.close())
    const watch = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 15_000 } }) as Promise<CallToolResult>
    await new Promise((r) => setTimeout(r, 1_200)) // three request timeouts, and more than a check interval
    const posted = await request(`${server.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: 'late' } })
    expect(posted.status).toBe(201)
    const result = await watch
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ comment: 'late' }] })
    await events.until((es) => es.some((e) => e.event === 'annotation.created'), 5_000)
    expect(events.ended).toBe(false)
  }, 30_000)
})

describe('HTTP abuse: MCP', () => {
  it('malformed JSON-RPC, garbage batches, unknown session ids: a JSON-RPC error with the right status each; the session survives; nothing stored', async () => {
    const { store, server } = await fileServer(cleanups)
    await store.createSession({ url: 'http://localhost:5173/' })
    const cases = await mcpGarbage(server, async () => store.rev)
    console.log(`abuse/mcp-garbage: ${JSON.stringify(cases)}`)
  }, 30_000)

  it('300 sessions opened and abandoned against a cap of 50: never more than 50, memory flat, new clients get in; all busy → 503 naming the cap', async () => {
    const figures = await abandonedSessions({ maxSessions: 50, abandon: 300 }, cleanups)
    console.log(`abuse/mcp-sessions: ${JSON.stringify(figures)}`)
  }, 120_000)

  it('abandoned sessions are closed by the idle sweeper', async () => {
    const { server, logs } = await fileServer(cleanups, { mcpIdleTimeoutMs: 200 })
    for (let i = 0; i < 30; i++) expect((await abandonedSession(server.mcpUrl)).status).toBe(200)
    expect(server.stats().mcpSessions).toBeGreaterThan(0)
    await until(() => server.stats().mcpSessions === 0, 'the idle sweeper to close every abandoned session', 10_000, 20)
    expect(server.presence()).toMatchObject({ connected: false, sessions: 0 })
    expect(logs.filter((l) => /closing MCP session .*: idle for/.test(l))).toHaveLength(30)
  }, 30_000)
})
