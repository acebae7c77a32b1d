import { BUILTIN_TOOLS } from '../../../src/tools/builtin.js'
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Annotation, HttpServer } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'
import { request, serve, SseClient } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function mcpClient(server: HttpServer, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers } })
  const client = new Client({ name: 'http-test', version: '1.0.0' })
  await client.connect(transport)
  cleanups.push(() => client.close())
  return { client, transport }
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
const MCP_HEADERS = { Accept: 'application/json, text/event-stream' }

describe('MCP over Streamable HTTP at /mcp', () => {
  it('serves the same tools as stdio; watch_annotations wakes on an annotation POSTed over REST', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const { client, transport } = await mcpClient(server)
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)

    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(BUILTIN_TOOLS.map((t) => t.name)) // the same list as stdio

    const session = (await request(`${server.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })).json as { id: string }
    const listed = (await client.callTool({ name: 'list_sessions', arguments: {} })) as CallToolResult
    expect(listed.structuredContent).toMatchObject({ count: 1, sessions: [{ id: session.id }] })

    // Wait until the server sees the agent inside watch_annotations (a presence event), then post.
    const events = await SseClient.open(`${server.url}/api/events`)
    cleanups.push(() => events.close())
    const watching = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 10_000 } }) as Promise<CallToolResult>
    await events.until((es) => es.some((e) => e.event === 'presence' && JSON.parse(e.data).watching === 1), 5_000, 'presence watching=1')
    expect(server.presence()).toMatchObject({ connected: true, sessions: 1, watching: 1 })
    const health = await request(`${server.url}/health`)
    expect(health.json.agent).toMatchObject({ connected: true, sessions: 1, watching: 1 })
    expect(health.json.agent.lastSeenAt).toMatch(/^\d{4}-\d\d-\d\dT/)

    const posted = await request(`${server.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: 'The logo is blurry', element: { selector: 'header img' } } })
    expect(posted.status).toBe(201)
    const result = await watching
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ status: 'annotations', count: 1, annotations: [{ id: posted.json.id, comment: 'The logo is blurry' }] })
    await events.until((es) => es.some((e) => e.event === 'presence' && JSON.parse(e.data).watching === 0 && JSON.parse(e.data).sessions === 1), 5_000, 'presence watching=0')

    // The agent's answer is visible over REST.
    const ack = (await client.callTool({ name: 'acknowledge', arguments: { id: posted.json.id, message: 'Looking' } })) as CallToolResult
    expect(ack.isError).toBeFalsy()
    const again = (await client.callTool({ name: 'acknowledge', arguments: { id: posted.json.id } })) as CallToolResult
    expect(again.isError).toBe(true)
    expect(again._meta).toMatchObject({ 'marginalia/error': { code: 'INVALID_TRANSITION' } })
    const got = (await request(`${server.url}/api/annotations/${posted.json.id}`)).json as Annotation
    expect(got.status).toBe('acknowledged')
    expect(got.replies).toMatchObject([{ author: 'agent', message: 'Looking' }])
  })

  it('each MCP session has its own server; DELETE ends a session and its id then gets 404', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const one = await mcpClient(server)
    const two = await mcpClient(server)
    expect(one.transport.sessionId).not.toBe(two.transport.sessionId)
    expect(server.stats().mcpSessions).toBe(2)

    const dead = one.transport.sessionId!
    await one.transport.terminateSession()
    expect(server.stats().mcpSessions).toBe(1)
    expect(server.presence()).toMatchObject({ connected: true, sessions: 1 })

    const headers = { ...MCP_HEADERS, 'Mcp-Session-Id': dead, 'Mcp-Protocol-Version': '2025-06-18' }
    const post = await request(server.mcpUrl, { method: 'POST', headers, body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} } })
    expect(post.status).toBe(404)
    expect(post.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 }, id: null })
    const get = await request(server.mcpUrl, { headers: { ...headers, Accept: 'text/event-stream' } })
    expect(get.status).toBe(404)
    const del = await request(server.mcpUrl, { method: 'DELETE', headers })
    expect(del.status).toBe(404)
    const never = await request(server.mcpUrl, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': 'not-a-session' }, body: { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} } })
    expect(never.status).toBe(404)

    // The other session is unaffected.
    const listed = await two.client.listTools()
    expect(listed.tools).toHaveLength(BUILTIN_TOOLS.length)

    await two.transport.terminateSession()
    expect(server.presence()).toMatchObject({ connected: false, sessions: 0 })
  })

  it('refuses requests that are not a session: no id and not initialize (400), bad JSON (400), wrong content type (415), wrong method (405)', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const noSession = await request(server.mcpUrl, { method: 'POST', headers: MCP_HEADERS, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } })
    expect(noSession.status).toBe(400)
    expect(noSession.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } })
    expect(noSession.json.error.message).toContain('Mcp-Session-Id')

    const badJson = await request(server.mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, 'Content-Type': 'application/json' }, body: '{"jsonrpc":' })
    expect(badJson.status).toBe(400)
    expect(badJson.json).toMatchObject({ error: { code: -32700 } })

    const text = await request(server.mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, 'Content-Type': 'text/plain' }, body: JSON.stringify(INIT) })
    expect(text.status).toBe(415)

    const put = await request(server.mcpUrl, { method: 'PUT', headers: MCP_HEADERS, body: INIT })
    expect(put.status).toBe(405)
    expect(put.headers.allow).toContain('POST')

    const noId = await request(server.mcpUrl, { headers: { Accept: 'text/event-stream' } })
    expect(noId.status).toBe(400)
    expect(server.stats().mcpSessions).toBe(0)
  })

  it('a raw initialize over HTTP returns an Mcp-Session-Id header, exposed to browsers via CORS', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const init = await request(server.mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, Origin: 'http://localhost:5173' }, body: INIT })
    expect(init.status).toBe(200)
    expect(init.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(init.headers['access-control-allow-origin']).toBe('http://localhost:5173')
    expect(init.headers['access-control-expose-headers']).toContain('Mcp-Session-Id')
    expect(server.stats().mcpSessions).toBe(1)
  })

  it('closing the server closes MCP sessions: an in-flight watch is aborted and the agent is gone', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, [])
    const { client } = await mcpClient(server)
    const events = await SseClient.open(`${server.url}/api/events`)
    cleanups.push(() => events.close())
    // The client only learns of it when its own request times out or it closes; the server side is what matters here.
    void client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 60_000 } }).catch(() => {})
    await events.until((es) => es.some((e) => e.event === 'presence' && JSON.parse(e.data).watching === 1), 5_000, 'presence watching=1')
    await server.close()
    await events.ended$()
    // The watch's abort signal fired on close: its handler unwinds within a few microtasks.
    for (let i = 0; i < 100 && server.presence().watching > 0; i++) await new Promise((r) => setImmediate(r))
    expect(server.stats()).toEqual({ eventStreams: 0, mcpSessions: 0 })
    expect(server.presence()).toMatchObject({ connected: false, sessions: 0, watching: 0 })
  })

  it('closes an MCP session idle past the timeout', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const logs: string[] = []
    const server = await serve(store, cleanups, { mcpIdleTimeoutMs: 30, log: (m) => logs.push(m) })
    const init = await request(server.mcpUrl, { method: 'POST', headers: MCP_HEADERS, body: INIT })
    const id = init.headers['mcp-session-id'] as string
    expect(server.stats().mcpSessions).toBe(1)
    const events = await SseClient.open(`${server.url}/api/events`)
    cleanups.push(() => events.close())
    await events.until((es) => es.some((e) => e.event === 'presence' && JSON.parse(e.data).sessions === 0), 5_000, 'the idle session to close')
    expect(server.stats().mcpSessions).toBe(0)
    expect(logs.some((l) => l.includes(`closing MCP session ${id}`))).toBe(true)
    const after = await request(server.mcpUrl, { method: 'POST', headers: { ...MCP_HEADERS, 'Mcp-Session-Id': id }, body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} } })
    expect(after.status).toBe(404)
  })
})

describe('MCP over HTTP: tool policy', () => {
  it('the serve tool options shape /mcp like stdio: read-only lists and allows only read-only tools', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups, { tools: { profile: 'read-only' } })
    const { client } = await mcpClient(server)
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(BUILTIN_TOOLS.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name))
    const refused = (await client.callTool({ name: 'acknowledge', arguments: { id: 'x' } })) as CallToolResult
    expect(refused.isError).toBe(true)
    expect(refused._meta).toMatchObject({ 'marginalia/error': { code: 'UNKNOWN_TOOL' } })
  })
})
