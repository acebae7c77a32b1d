/**
 * Fair shares on a team server: one agent holding many MCP sessions never locks another out nor
 * ends another's session; a flood of bogus well-formed tokens gets 429 before any key is derived,
 * and a signed-in person's reads and writes stay fast meanwhile.
 */
import { describe, expect, it } from 'vitest'
import { addAgent } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, SseClient, bearer } from '../../helpers/http.js'
import { runAuthFlood } from '../../helpers/flood.js'

const MCP_HEADERS = { Accept: 'application/json, text/event-stream' }

const cleanups = useCleanups()

/** One initialize over raw HTTP: its status and the session id it got. */
async function initialize(mcpUrl: string, token: string): Promise<{ status: number; session?: string }> {
  const r = await request(mcpUrl, {
    method: 'POST',
    headers: { ...bearer(token), ...MCP_HEADERS },
    body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'fair', version: '1.0.0' } } },
  })
  const session = r.headers['mcp-session-id']
  return { status: r.status, ...(typeof session === 'string' ? { session } : {}) }
}

/** A ping in a session: 200 while the session lives, 404 once it ended. */
async function ping(mcpUrl: string, token: string, session: string): Promise<number> {
  const r = await request(mcpUrl, { method: 'POST', headers: { ...bearer(token), ...MCP_HEADERS, 'Mcp-Session-Id': session }, body: { jsonrpc: '2.0', id: 2, method: 'ping' } })
  return r.status
}

/** A team server (no request rate limit) with two agents: one that takes all it can, and another. */
async function twoAgents() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { team: { ratePerSecond: 0 } })
  return { http, greedy: (await addAgent(store, 'greedy')).token, other: (await addAgent(store, 'other')).token }
}

describe('MCP sessions per identity', () => {
  it('one agent opening 100 idle sessions ends only its own; another agent initializes and keeps its session', async () => {
    const { http, greedy, other } = await twoAgents()
    const first = await initialize(http.mcpUrl, other)
    expect(first.status).toBe(200)
    const held: string[] = []
    for (let i = 0; i < 100; i++) {
      const r = await initialize(http.mcpUrl, greedy)
      expect(r.status).toBe(200)
      held.push(r.session!)
    }
    const second = await initialize(http.mcpUrl, other)
    expect(second.status).toBe(200)
    for (let i = 0; i < 100; i++) expect((await initialize(http.mcpUrl, greedy)).status).toBe(200)
    // The other agent's sessions were never given up for the greedy one's.
    expect(await ping(http.mcpUrl, other, first.session!)).toBe(200)
    expect(await ping(http.mcpUrl, other, second.session!)).toBe(200)
    // The greedy agent's first sessions made way for its later ones; a session answers its owner only.
    expect(await ping(http.mcpUrl, greedy, held[0]!)).toBe(404)
    expect(await ping(http.mcpUrl, greedy, first.session!)).toBe(404)
  })

  it('one agent holding sessions with open streams gets 503 itself; another agent still initializes', async () => {
    const { http, greedy, other } = await twoAgents()
    let refused = 0
    for (let i = 0; i < 100 && refused === 0; i++) {
      const r = await initialize(http.mcpUrl, greedy)
      if (r.status !== 200) {
        expect(r.status).toBe(503)
        refused++
        break
      }
      const stream = await SseClient.open(http.mcpUrl, { ...bearer(greedy), 'Mcp-Session-Id': r.session! })
      cleanups.push(() => stream.close())
      expect(stream.status).toBe(200)
    }
    expect(refused).toBe(1) // the greedy agent met its own limit before holding 100
    const r = await initialize(http.mcpUrl, other)
    expect(r.status).toBe(200)
    expect(await ping(http.mcpUrl, other, r.session!)).toBe(200)
  })
})

describe('a flood of bogus tokens', () => {
  it('gets 429 with Retry-After once the address is over its budget, and a signed-in person stays fast', { timeout: 120_000 }, async () => {
    const f = await runAuthFlood(cleanups, { requests: 300, inFlight: 30, rounds: 10 })
    expect(f.requests).toBe(300)
    expect(f.unauthorized + f.limited).toBe(300)
    // The budget (20 at once, then 1 a second) is all the key derivations the flood gets.
    expect(f.unauthorized).toBeLessThanOrEqual(20 + 30)
    expect(f.limited).toBeGreaterThanOrEqual(250)
    expect(f.retryAfterEverywhere).toBe(true)
    expect(f.duringMs).toBeLessThan(Math.max(20 * f.baselineMs, 1_500))
  })
})
