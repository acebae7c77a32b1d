/**
 * capture and annotate on a team server: agents with their own tokens over MCP, the person signed
 * in. The person's browser is played over REST here (its stream, its upload, its answer), as the
 * overlay does it; the browser side itself is tested in Chromium (test/browser/context/agent-capture).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/store/index.js'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, SseClient, bearer, codeOf } from '../../helpers/http.js'
import { solidPng } from '../../helpers/png.js'

const cleanups = useCleanups()

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const alice = await addPerson(store, 'Alice', { publicUrl: http.url })
  const redeemed = await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })
  const token = redeemed.json.token as string
  const tokens: Record<string, string> = {}
  const connect = async (name: string) => {
    const agent = await addAgent(store, name)
    tokens[name] = agent.token
    const client = new Client({ name, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl), { requestInit: { headers: bearer(agent.token) } }))
    cleanups.push(() => client.close())
    return (tool: string, args: Record<string, unknown>) => client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>
  }
  return { http, token, reviewer: await connect('reviewer'), fixer: await connect('fixer'), tokens }
}

describe('agents with eyes on a team server', () => {
  it("annotate is the agent's own: watch never gives it back to its author, gives it to another agent, not with authors: people", async () => {
    const { http, token, reviewer, fixer } = await team()
    const filed = await reviewer('annotate', { url: 'http://app.test:5173/checkout?step=2', selector: '#pay', comment: 'Pay button overlaps the total', severity: 'important' })
    expect(filed.isError, JSON.stringify(filed.content)).toBeFalsy()
    const { id, url } = filed.structuredContent as { id: string; url: string }
    expect(url).toBe('http://app.test:5173/checkout')
    const record = await request(`${http.url}/api/annotations/${id}`, { headers: bearer(token) })
    expect(record.json).toMatchObject({ author: 'agent', by: { name: 'reviewer', kind: 'agent' }, severity: 'important', element: { selector: '#pay' } })

    expect((await reviewer('watch_annotations', { timeoutMs: 300 })).structuredContent).toMatchObject({ status: 'timeout' })
    const seen = (await fixer('watch_annotations', { timeoutMs: 300 })).structuredContent as { status: string; annotations: { id: string }[] }
    expect(seen.annotations.map((a) => a.id)).toEqual([id])
    expect((await fixer('watch_annotations', { timeoutMs: 300, authors: 'people' })).structuredContent).toMatchObject({ status: 'timeout' })

    const bad = await reviewer('annotate', { url: 'http://app.test/', comment: 'x' })
    expect(bad.isError).toBe(true)
    expect(JSON.stringify(bad.content)).toContain('selector')
  })

  it("capture through the team server: the signed-in person's browser answers, the agent gets the picture", async () => {
    const { http, token, reviewer, fixer, tokens } = await team()
    const { id } = (await reviewer('annotate', { url: 'http://app.test:5173/', selector: '#pay', comment: 'Too small' })).structuredContent as { id: string }
    const session = (await request(`${http.url}/api/annotations/${id}`, { headers: bearer(token) })).json.sessionId as string
    const stream = await SseClient.open(`${http.url}/api/sessions/${session}/events`, bearer(token))
    cleanups.push(() => stream.close())

    const capturing = fixer('capture', { id, timeoutMs: 10_000 })
    const [asked] = (await stream.until((es) => es.some((e) => e.event === 'capture.requested'))).filter((e) => e.event === 'capture.requested')
    const { requestId, token: captureToken } = JSON.parse(asked!.data) as { requestId: string; token: string }
    const png = solidPng(40, 20, [0, 160, 60])
    const upload = await request(`${http.url}/api/attachments`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'image/png' }, body: png })
    expect(upload.status).toBe(201)
    const attachment = { id: 'att_1', kind: 'screenshot', mime: 'image/png', bytes: png.length, width: 40, height: 20, sha256: upload.json.sha256 as string }
    // An agent may not answer for a browser.
    const answer = { requestId, token: captureToken, attachment, url: 'http://app.test:5173/', anchor: 'found', capturedAt: new Date().toISOString() }
    const agentTry = await request(`${http.url}/api/annotations/${id}/captures`, { method: 'POST', headers: bearer(tokens.fixer!), body: answer })
    expect(agentTry.status).toBe(403)
    expect((await request(`${http.url}/api/annotations/${id}/captures`, { method: 'POST', headers: bearer(token), body: answer })).status).toBe(201)

    const result = await capturing
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
    const image = result.content.find((c) => c.type === 'image')
    expect(image && image.type === 'image' && Buffer.from(image.data, 'base64').equals(png)).toBe(true)
    expect(result.structuredContent).toMatchObject({ annotationId: id, anchor: 'found', url: 'http://app.test:5173/' })
  })
})
