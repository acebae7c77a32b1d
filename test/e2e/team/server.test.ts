/** The team inbox, HTTP level: sign-in, roles, revocation closing streams, rate limits, CORS, zero-config unchanged. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, SseClient, bearer, codeOf } from '../../helpers/http.js'
import type { HttpServerOptions } from '../../../src/index.js'

const APP = 'http://app.test:5173'

const cleanups = useCleanups()

async function team(options: HttpServerOptions = {}) {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { allowOrigins: [APP], ...options })
  const alice = await addPerson(store, 'Alice', { publicUrl: http.url })
  const redeemed = await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })
  expect(redeemed.status).toBe(200)
  const agent = await addAgent(store, 'ci-agent')
  return { store, http, alice: { ...alice, token: redeemed.json.token as string }, agent }
}

async function annotate(url: string, token: string) {
  const session = await request(`${url}/api/sessions`, { method: 'POST', headers: bearer(token), body: { url: 'http://app.test/' } })
  expect(session.status).toBe(201)
  const a = await request(`${url}/api/sessions/${session.json.id}/annotations`, { method: 'POST', headers: bearer(token), body: { comment: 'The button is cut off' } })
  expect(a.status).toBe(201)
  return a.json as { id: string; by: { name: string } }
}

describe('team inbox over HTTP', () => {
  it('zero-config local use is unchanged: no people, no token, everything works without a header', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const s = await request(`${http.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    expect(s.status).toBe(201)
    expect((await request(`${http.url}/api/annotations`)).status).toBe(200)
  })

  it('once someone exists, requests need a bearer token; the sign-in link works once', async () => {
    const { http, alice } = await team()
    expect((await request(`${http.url}/api/annotations`)).status).toBe(401)
    expect((await request(`${http.url}/api/annotations`, { headers: bearer('mgs_nope') })).status).toBe(401)
    expect((await request(`${http.url}/health`)).status).toBe(200) // health stays open
    const a = await annotate(http.url, alice.token)
    expect(a.by.name).toBe('Alice')
    const again = await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })
    expect(again.status).toBe(401)
    const me = await request(`${http.url}/auth/me`, { headers: bearer(alice.token) })
    expect(me.json.identity).toMatchObject({ name: 'Alice', kind: 'person' })
  })

  it('roles: a person cannot use agent routes or MCP; an agent cannot add people or create annotations', async () => {
    const { store, http, alice, agent } = await team()
    const a = await annotate(http.url, alice.token)
    const ack = await request(`${http.url}/api/annotations/${a.id}/acknowledge`, { method: 'POST', headers: bearer(alice.token), body: {} })
    expect(ack.status).toBe(403)
    expect(ack.json.error.code).toBe('ROLE_FORBIDDEN')
    const mcp = await request(http.mcpUrl, { method: 'POST', headers: { ...bearer(alice.token), Accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } })
    expect(mcp.status).toBe(403)
    const addPeople = await request(`${http.url}/api/people`, { method: 'POST', headers: bearer(agent.token), body: { name: 'Mallory' } })
    expect(addPeople.status).toBe(403)
    expect(addPeople.json.error.code).toBe('ROLE_FORBIDDEN')
    expect((await request(`${http.url}/api/people`, { method: 'POST', headers: bearer(alice.token), body: { name: 'Mallory' } })).status).toBe(403)
    expect((await request(`${http.url}/api/sessions`, { method: 'POST', headers: bearer(agent.token), body: { url: 'http://app.test/' } })).status).toBe(403)
    // The agent's REST side works and its reply carries its name.
    const acked = await request(`${http.url}/api/annotations/${a.id}/acknowledge`, { method: 'POST', headers: bearer(agent.token), body: { message: 'On it' } })
    expect(acked.status).toBe(200)
    expect(acked.json.replies[0]).toMatchObject({ author: 'agent', by: { name: 'ci-agent', kind: 'agent' } })
    // A person deletes only their own annotations.
    const bob = await addPerson(store, 'Bob', { publicUrl: http.url })
    const bobToken = (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(bob.link) } })).json.token as string
    const del = await request(`${http.url}/api/annotations/${a.id}`, { method: 'DELETE', headers: bearer(bobToken) })
    expect(del.status).toBe(403)
    expect((await request(`${http.url}/api/annotations/${a.id}`, { method: 'DELETE', headers: bearer(alice.token) })).status).toBe(200)
  })

  it('an agent uses MCP over HTTP with its token; its changes say who made them', async () => {
    const { http, alice, agent } = await team()
    const a = await annotate(http.url, alice.token)
    const client = new Client({ name: 'ci', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl), { requestInit: { headers: bearer(agent.token) } }))
    cleanups.push(() => client.close())
    const r = await client.callTool({ name: 'acknowledge', arguments: { id: a.id, message: 'Looking' } })
    expect(r.isError).toBeFalsy()
    const got = await request(`${http.url}/api/annotations/${a.id}`, { headers: bearer(alice.token) })
    expect(got.json.replies[0].by).toMatchObject({ name: 'ci-agent' })
  })

  it('revocation: the open event stream closes within 1 s and the next request is 401', async () => {
    const { store, http, alice } = await team()
    const sse = await SseClient.open(`${http.url}/api/events`, bearer(alice.token))
    cleanups.push(() => sse.close())
    expect(sse.status).toBe(200)
    const t0 = Date.now()
    await store.identities.revoke(alice.identity.id)
    await sse.ended$(1_000)
    expect(Date.now() - t0).toBeLessThan(1_000)
    expect((await request(`${http.url}/api/annotations`, { headers: bearer(alice.token) })).status).toBe(401)
  })

  it('sign-out ends the session and closes its stream', async () => {
    const { http, alice } = await team()
    const sse = await SseClient.open(`${http.url}/api/events`, bearer(alice.token))
    cleanups.push(() => sse.close())
    expect((await request(`${http.url}/auth/sign-out`, { method: 'POST', headers: bearer(alice.token) })).status).toBe(200)
    await sse.ended$(1_000)
    expect((await request(`${http.url}/api/annotations`, { headers: bearer(alice.token) })).status).toBe(401)
  })

  it('rate limit: 429 with Retry-After, then it recovers', async () => {
    const { http, agent } = await team({ team: { ratePerSecond: 2, rateBurst: 3 } })
    const statuses: number[] = []
    let retryAfter: string | undefined
    for (let i = 0; i < 5; i++) {
      const r = await request(`${http.url}/api/annotations`, { headers: bearer(agent.token) })
      statuses.push(r.status)
      if (r.status === 429) retryAfter = r.headers['retry-after'] as string
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200])
    expect(statuses).toContain(429)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    await new Promise((r) => setTimeout(r, Number(retryAfter) * 1000))
    expect((await request(`${http.url}/api/annotations`, { headers: bearer(agent.token) })).status).toBe(200)
  })

  it('CORS: an allowed app origin gets its headers and preflight; another site gets 403 and no data', async () => {
    const { http, alice } = await team()
    const pre = await request(`${http.url}/api/annotations`, { method: 'OPTIONS', headers: { Origin: APP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } })
    expect(pre.status).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe(APP)
    expect(String(pre.headers['access-control-allow-headers'])).toMatch(/Authorization/)
    const ok = await request(`${http.url}/api/annotations`, { headers: { Origin: APP, ...bearer(alice.token) } })
    expect(ok.status).toBe(200)
    expect(ok.headers['access-control-allow-origin']).toBe(APP)
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined()
    const evil = await request(`${http.url}/api/annotations`, { headers: { Origin: 'http://evil.test:5173', ...bearer(alice.token) } })
    expect(evil.status).toBe(403)
    expect(evil.headers['access-control-allow-origin']).toBeUndefined()
    expect(evil.text).not.toContain('annotations"')
    // The popup hands tokens only to allowed origins.
    expect((await request(`${http.url}/auth/popup?origin=${encodeURIComponent('http://evil.test:5173')}`)).status).toBe(403)
    expect((await request(`${http.url}/auth/token`, { method: 'POST', headers: bearer(alice.token), body: { origin: 'http://evil.test:5173' } })).status).toBe(403)
    const t = await request(`${http.url}/auth/token`, { method: 'POST', headers: { ...bearer(alice.token), Origin: http.url }, body: { origin: APP } })
    expect(t.status).toBe(200)
    expect(t.json.token).toMatch(/^mgs_/)
  })

  it('--public-url and --trust-proxy: the public host passes, X-Forwarded-Host is checked only when trusted', async () => {
    const { http, alice } = await team({ team: { publicUrl: 'https://marginalia.example.com', trustProxy: true } })
    const viaProxy = await request(`${http.url}/api/annotations`, { headers: { Host: 'marginalia.example.com', ...bearer(alice.token) } })
    expect(viaProxy.status).toBe(200)
    const forged = await request(`${http.url}/api/annotations`, { headers: { 'X-Forwarded-Host': 'evil.example', ...bearer(alice.token) } })
    expect(forged.status).toBe(403)
  })
})
