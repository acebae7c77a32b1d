/**
 * Fair shares and tidy ids, with the official clients over Streamable HTTP: one 2025 session that
 * fills its share of the task table does not deny another session a task; an agent's questions are
 * capped per thread and per agent (another agent still asks); a 2026-07-28 task id issued on one
 * store is "not found" on a server of another store; and in local mode an answer to an agent's
 * `capture` needs the request's one-time token, which only a listener of the page's stream holds.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { z } from 'zod'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Transport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { addAgent } from '../../../src/auth/identities.js'
import { createMemoryStore, openStore } from '../../../src/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { bearer, request, serve, SseClient } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import { connectTaskClient, envelope } from '../../helpers/tasks-v2.js'

const cleanups = useCleanups()
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex')

async function v1(url: string, headers: Record<string, string> = {}) {
  const c = new Client2025({ name: 'fair-v1', version: '1.0.0' })
  await c.connect(new Transport2025(new URL(url), { requestInit: { headers } }))
  cleanups.push(() => c.close())
  return c
}

async function session2025(url: string) {
  const c = new Client({ name: 'fair-2025', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } } as never, versionNegotiation: { mode: 'legacy' } })
  await c.connect(new StreamableHTTPClientTransport(new URL(url)))
  cleanups.push(() => c.close())
  return c
}

const TaskCreated = z.looseObject({ task: z.looseObject({ taskId: z.string(), status: z.string() }) })

describe('fair shares', () => {
  it('the 2025 task table: a session at its limit is refused, naming it; another session still gets a task', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const start = (c: Client) => c.request({ method: 'tools/call', params: { name: 'watch_annotations', arguments: { timeoutMs: 55_000 }, task: { ttl: 60_000 } } } as never, TaskCreated as never) as Promise<z.infer<typeof TaskCreated>>
    const greedy = await session2025(http.mcpUrl)
    for (let i = 0; i < 100; i++) expect((await start(greedy)).task.status).toBe('working')
    await expect(start(greedy)).rejects.toThrow(/Too many tasks for this caller: all 100 of yours are running \(the limit per caller\)/)
    const other = await session2025(http.mcpUrl)
    expect((await start(other)).task.status).toBe('working')
  })

  it('questions: at most 10 unanswered on one thread, at most 100 open per agent; the person’s answer and another agent are not held back', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    // Over a hundred calls in a row: the per-identity request rate is not what this test is about.
    const http = await serve(store, cleanups, { team: { ratePerSecond: 0 } })
    const one = await addAgent(store, 'agent-one')
    const two = await addAgent(store, 'agent-two')
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const annotations = []
    for (let i = 0; i < 102; i++) annotations.push(await store.addAnnotation({ sessionId: session.id, comment: `Item ${i}` }))
    const a = await v1(http.mcpUrl, bearer(one.token))
    const ask = (id: string) => a.callTool({ name: 'ask', arguments: { id, question: 'Should I?', timeoutMs: 1 } }) as Promise<{ isError?: boolean; content: { text: string }[] }>

    const first = annotations[0]!.id
    for (let i = 0; i < 10; i++) expect((await ask(first)).isError).toBeFalsy()
    const eleventh = await ask(first)
    expect(eleventh.isError).toBe(true)
    expect(eleventh.content[0]!.text).toContain('10 unanswered questions (the limit per thread is 10)')
    expect(store.getAnnotation(first).replies).toHaveLength(10)

    for (let i = 1; i < 100; i++) expect((await ask(annotations[i]!.id)).isError, `annotation ${i}`).toBeFalsy()
    const over = await ask(annotations[100]!.id)
    expect(over.isError).toBe(true)
    expect(over.content[0]!.text).toContain('agent-one has 100 open questions the person has not answered (the limit per agent is 100)')

    // Another agent still asks; the person's answer frees a thread for the first.
    const b = await v1(http.mcpUrl, bearer(two.token))
    expect(((await b.callTool({ name: 'ask', arguments: { id: annotations[100]!.id, question: 'May I?', timeoutMs: 1 } })) as { isError?: boolean }).isError).toBeFalsy()
    await store.reply(first, { author: 'human', message: 'Yes' })
    expect((await ask(annotations[101]!.id)).isError).toBeFalsy()
  })
})

describe('tidy ids', () => {
  it('a 2026-07-28 task id from a server of another file store is "not found"', { timeout: 30_000 }, async () => {
    const stores = []
    for (const name of ['one', 'two']) {
      const { dir } = testDir(cleanups)
      const store = await openStore({ file: path.join(dir, name, 'store.json') })
      cleanups.push(() => store.close())
      stores.push({ store, http: await serve(store, cleanups) })
    }
    const [one, two] = stores as [(typeof stores)[0], (typeof stores)[0]]
    await one.store.createSession({ url: 'http://localhost:5173/' })
    await two.store.createSession({ url: 'http://localhost:5173/' })
    const c1 = await connectTaskClient(new StreamableHTTPClientTransport(new URL(one.http.mcpUrl)), cleanups, 'store-one')
    const c2 = await connectTaskClient(new StreamableHTTPClientTransport(new URL(two.http.mcpUrl)), cleanups, 'store-two')
    const created = (await c1.raw({ method: 'tools/call', params: { name: 'watch_annotations', arguments: { timeoutMs: 30_000 }, _meta: envelope('one') } })).result as { taskId: string }
    expect(created.taskId).toMatch(/^mwt1_/)
    expect((await c1.raw({ method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope('one') } })).result).toMatchObject({ status: 'working' })
    const foreign = await c2.raw({ method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope('two') } })
    expect(foreign.error).toMatchObject({ code: -32602, message: expect.stringMatching(/task not found/) })
  })

  it('local mode: an answer to an agent’s capture needs the request’s one-time token; the page’s answer with it is taken once', { timeout: 30_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Pay button', element: { selector: '#pay' } })
    const stream = await SseClient.open(`${http.url}/api/sessions/${session.id}/events`)
    cleanups.push(() => stream.close())
    const agent = await v1(http.mcpUrl)
    const capturing = agent.callTool({ name: 'capture', arguments: { id: a.id, timeoutMs: 10_000 } }) as Promise<{ isError?: boolean; content: { type: string; data?: string }[] }>
    const [asked] = (await stream.until((es) => es.some((e) => e.event === 'capture.requested'))).filter((e) => e.event === 'capture.requested')
    const { requestId, token } = JSON.parse(asked!.data) as { requestId: string; token: string }
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/)

    const upload = await request(`${http.url}/api/attachments`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: PNG })
    expect(upload.status).toBe(201)
    const answer = { requestId, attachment: { id: 'att_1', kind: 'screenshot', mime: 'image/png', bytes: PNG.length, width: 1, height: 1, sha256: upload.json.sha256 as string }, url: 'http://localhost:5173/', anchor: 'found', capturedAt: new Date().toISOString() }
    const post = (body: unknown) => request(`${http.url}/api/annotations/${a.id}/captures`, { method: 'POST', body })
    // A loopback caller that knows only the request id, or guesses the token, is refused.
    expect((await post(answer)).status).toBe(403)
    expect((await post({ ...answer, token: 'A'.repeat(22) })).status).toBe(403)
    // The page's answer, with the token, is taken; a second one with the same token is not.
    expect((await post({ ...answer, token })).status).toBe(201)
    expect((await post({ ...answer, token })).status).toBe(403)
    const result = await capturing
    expect(result.isError).toBeFalsy()
    expect(result.content.some((c) => c.type === 'image')).toBe(true)
    // The secret is not kept in the store.
    expect(JSON.stringify(store.changesSince(0).filter((e) => e.type === 'capture.taken'))).not.toContain(token)
  })
})
