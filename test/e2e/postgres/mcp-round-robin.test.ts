/**
 * Any server answers: two `marginalia serve` processes (the built CLI) on one PostgreSQL schema
 * behind a round-robin proxy with no stickiness. A client pinned to 2026-07-28 runs an agent
 * session through the proxy, its requests alternating between the processes; a watch on one
 * process wakes on an annotation written through the other. A 2025 client keeps its session on
 * one process. A wait run as a task on one process wakes on a write through the other. A
 * 2026-07-28 task (the tasks extension, stateless) is answered by whichever process gets its poll:
 * created through the proxy and settled by polls that alternate; created on A, polled on B after A
 * is gone.
 */
import { expect, it } from 'vitest'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client'
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Transport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openStore } from '../../../src/index.js'
import { request } from '../../helpers/http.js'
import { startServeCli } from '../../helpers/cli.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { connectTaskClient, envelope } from '../../helpers/tasks-v2.js'
import { until } from '../../helpers/eventually.js'
import { PG_URL, describePg, schemaStore } from '../../helpers/pg.js'

const cleanups = useCleanups()

/** A round-robin HTTP proxy on 127.0.0.1: request n goes to backends[n % length], bodies streamed both ways. */
async function roundRobin(backends: string[]): Promise<{ url: string; hits: number[] }> {
  const hits = backends.map(() => 0)
  let next = 0
  const proxy = http.createServer((req, res) => {
    const i = next++ % backends.length
    hits[i]!++
    const target = new URL(req.url ?? '/', backends[i])
    const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())))
  cleanups.push(() => proxy.closeAllConnections())
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, hits }
}

const suite = await describePg('MCP 2026-07-28 through a round-robin proxy on PostgreSQL')

suite('two serve processes on one PostgreSQL schema behind a round-robin proxy', () => {
  it('a 2026-07-28 client runs an agent session through the proxy; a 2025 client keeps its session on one process', async () => {
    const { schema, store: storeUrl, dir } = schemaStore(cleanups)
    const a = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const b = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const proxy = await roundRobin([a.url, b.url])

    const sessionId = ((await request(`${a.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })).json as { id: string }).id

    const client = new Client({ name: 'behind-a-proxy', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)))
    cleanups.push(() => client.close())
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')

    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      return result.structuredContent as Record<string, unknown>
    }
    expect(await call('list_sessions', {})).toMatchObject({ count: 1, sessions: [{ id: sessionId }] })

    // The watch lands on one process; the annotation is written through each process in turn.
    for (const via of [a, b]) {
      const before = [...proxy.hits]
      const watching = call('watch_annotations', { timeoutMs: 15_000 })
      const posted = (await request(`${via.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `written through ${via === a ? 'A' : 'B'}` } })).json as { id: string }
      const watched = await watching
      expect(watched).toMatchObject({ status: 'annotations', annotations: expect.arrayContaining([expect.objectContaining({ id: posted.id })]) as unknown })
      // Acknowledge and resolve: two more requests, so each process answers part of the session.
      expect(await call('acknowledge', { id: posted.id })).toMatchObject({ annotation: { id: posted.id, status: 'acknowledged' } })
      expect(await call('reply', { id: posted.id, message: 'On it.' })).toMatchObject({ annotation: { id: posted.id } })
      expect(await call('resolve', { id: posted.id, summary: 'Done.' })).toMatchObject({ annotation: { id: posted.id, status: 'resolved' } })
      expect(proxy.hits[0]! - before[0]!).toBeGreaterThan(0)
      expect(proxy.hits[1]! - before[1]!).toBeGreaterThan(0)
    }
    const store = await openStore({ url: PG_URL, schema })
    cleanups.push(() => store.close())
    expect(store.getSession(sessionId).annotations.map((x) => [x.comment, x.status, x.replies.map((r) => r.message)])).toEqual([
      ['written through A', 'resolved', ['On it.', 'Done.']],
      ['written through B', 'resolved', ['On it.', 'Done.']],
    ])

    // A 2025 session lives in one process: it works there (a balancer must route it by Mcp-Session-Id).
    const old = new Client2025({ name: 'v1', version: '1.0.0' })
    await old.connect(new Transport2025(new URL(`${a.url}/mcp`)))
    cleanups.push(() => old.close())
    expect((await old.callTool({ name: 'list_sessions', arguments: {} })).structuredContent).toMatchObject({ count: 1 })
  })

  it('a wait as a task outlives a 400 ms client timeout on process A and wakes on an annotation written through process B', async () => {
    const { store: storeUrl, dir } = schemaStore(cleanups)
    const a = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const b = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const sessionId = ((await request(`${b.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })).json as { id: string }).id

    // A 2025-11-25 session (tasks there are a session feature) on A.
    const client = new Client({ name: 'tasks-on-a', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`)))
    cleanups.push(() => client.close())
    const tasks = createTaskSessionFromClient(client, { endpointId: 'process-a' })
    cleanups.push(() => tasks.close())
    const execution = await tasks.callTool('watch_annotations', { timeoutMs: 20_000 }, { requestTimeoutMs: 400, task: { preference: 'require' } })
    expect(execution.kind).toBe('task')
    // The same wait as a plain call dies at that timeout; only then is the annotation written, through B.
    await expect(client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } }, { timeout: 400 })).rejects.toThrow(/timed out|timeout/i)
    const posted = (await request(`${b.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: 'Written through B' } })).json as { id: string }
    const result = resultFromTaskOutcome((await execution.settle()).outcome) as { isError?: boolean; structuredContent?: unknown }
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ id: posted.id, comment: 'Written through B' }] })
  })

  it('a 2026-07-28 task is answered by any process: settled through the proxy, and polled on B after A, which created it, is gone', async () => {
    const { schema, store: storeUrl, dir } = schemaStore(cleanups)
    const a = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const b = await startServeCli(cleanups, dir, ['--store', storeUrl])
    const proxy = await roundRobin([a.url, b.url])
    const person = await openStore({ url: PG_URL, schema })
    cleanups.push(() => person.close())
    const session = await person.createSession({ url: 'http://localhost:5173/' })

    // Through the proxy: the task is created by one process, its polls alternate between both.
    const viaProxy = await connectTaskClient(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)), cleanups, 'tasks-via-proxy')
    const before = [...proxy.hits]
    const execution = await viaProxy.session.callTool('watch_annotations', { timeoutMs: 30_000 }, { requestTimeoutMs: 400, task: { preference: 'require' } })
    expect(execution.kind).toBe('task')
    await expect(viaProxy.client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 30_000 } }, { timeout: 400 })).rejects.toThrow(/timed out|timeout/i)
    const posted = await person.addAnnotation({ sessionId: session.id, comment: 'Written by the person' })
    const result = resultFromTaskOutcome((await execution.settle()).outcome) as { isError?: boolean; structuredContent?: unknown }
    expect(result.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ id: posted.id, comment: 'Written by the person' }] })
    expect(proxy.hits[0]! - before[0]!).toBeGreaterThan(0)
    expect(proxy.hits[1]! - before[1]!).toBeGreaterThan(0)

    // ask on A: the question is posted when the task is created. Then A is gone; B answers the polls.
    const onA = await connectTaskClient(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`)), cleanups, 'tasks-on-a')
    const created = (await onA.raw({ method: 'tools/call', params: { name: 'ask', arguments: { id: posted.id, question: 'Which page?', timeoutMs: 60_000 }, _meta: envelope('tasks-on-a') } })).result as { resultType: string; taskId: string }
    expect(created.resultType).toBe('task')
    const exited = new Promise((resolve) => a.child.once('exit', resolve))
    a.child.kill('SIGKILL')
    await exited
    const onB = await connectTaskClient(new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`)), cleanups, 'tasks-on-b')
    const poll = async () => (await onB.raw({ method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope('tasks-on-b') } })).result as Record<string, unknown>
    expect(await poll()).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(new RegExp(`Waiting for the person to answer question \\S+ on ${posted.id}`)) })
    await person.sync()
    expect(person.getAnnotation(posted.id).replies.filter((r) => r.kind === 'question').map((r) => r.message)).toEqual(['Which page?'])
    await person.reply(posted.id, { author: 'human', message: 'The checkout' })
    let last: Record<string, unknown> = {}
    await until(async () => (last = await poll()).status === 'completed', 'B to see the answer', 10_000, 100)
    expect(last).toMatchObject({ result: { structuredContent: { status: 'answered', question: 'Which page?', answer: { message: 'The checkout' } } } })
    // Polling asked nothing twice.
    await person.sync()
    expect(person.getAnnotation(posted.id).replies.filter((r) => r.kind === 'question')).toHaveLength(1)
  })
})
