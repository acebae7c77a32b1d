/**
 * Waits as tasks: a task-aware client (the official v2 client with `@modelcontextprotocol/ext-tasks`)
 * on a 2025-11-25 session calls a wait with a request timeout shorter than the wait. The same wait
 * as a plain call dies at that timeout; as a task it is answered at once, polled with short
 * requests, and its result arrives when the person acts — over stdio (`marginalia mcp`) and over
 * Streamable HTTP. tasks/list shows the task; a task is its owner's only.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client'
import { GetTaskResultV1Schema, ListTasksResultV1Schema } from '@modelcontextprotocol/ext-tasks/core/v1'
import { openStore, type Store } from '../../src/index.js'
import { memoryStore, testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI } from '../helpers/cli.js'
import { serve } from '../helpers/http.js'
import { until } from '../helpers/eventually.js'

const cleanups = useCleanups()
/** The client's request timeout in this test: every request must answer within it. */
const TIMEOUT_MS = 400

interface CallResult {
  isError?: boolean
  structuredContent?: Record<string, unknown>
  _meta?: Record<string, unknown>
}

async function waitOutlivesTimeout(client: Client, person: Store, sessionId: string): Promise<void> {
  const { tools } = await client.listTools()
  const waits = tools.filter((t) => t.execution?.taskSupport === 'optional').map((t) => t.name)
  expect(waits.sort()).toEqual(['ask', 'await_reply', 'watch_annotations', 'watch_changes'])
  expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } })

  const session = createTaskSessionFromClient(client, { endpointId: 'marginalia-test' })
  cleanups.push(() => session.close())
  const execution = await session.callTool('watch_annotations', { timeoutMs: 20_000 }, { requestTimeoutMs: TIMEOUT_MS, task: { preference: 'require' } })
  expect(execution.kind).toBe('task')

  // The same wait as a plain call dies at the client's timeout…
  await expect(client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } }, { timeout: TIMEOUT_MS })).rejects.toThrow(/timed out|timeout/i)
  // …and only then does the person annotate: the task has outlived its client's timeout.
  const started = Date.now()
  const posted = await person.addAnnotation({ sessionId, comment: 'Arrived after the timeout' })
  const { outcome } = await execution.settle()
  const result = resultFromTaskOutcome(outcome) as CallResult
  expect(result.isError).toBeFalsy()
  expect(result.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ id: posted.id, comment: 'Arrived after the timeout' }] })
  expect(Object.keys(result._meta ?? {})).toContain('io.modelcontextprotocol/related-task')
  expect(Date.now() - started).toBeLessThan(15_000)

  const listed = await client.request({ method: 'tasks/list', params: {} }, ListTasksResultV1Schema)
  expect(listed.tasks).toContainEqual(expect.objectContaining({ taskId: execution.handle!.taskId, status: 'completed' }))
}

describe('waits as tasks (2025-11-25 sessions)', () => {
  it('over stdio: a watch longer than the client timeout completes through its task', async () => {
    const { dir } = testDir(cleanups)
    const person = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => person.close())
    const s = await person.createSession({ url: 'http://localhost:5173/' })
    const client = new Client({ name: 'tasks-stdio', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '1' } as Record<string, string>, stderr: 'pipe' }))
    cleanups.push(() => client.close())
    await waitOutlivesTimeout(client, person, s.id)
  })

  it('over HTTP: the same; another session does not see the task; tasks/cancel stops the wait', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const client = new Client({ name: 'tasks-http', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => client.close())
    await waitOutlivesTimeout(client, store, s.id)

    const mine = await client.request({ method: 'tasks/list', params: {} }, ListTasksResultV1Schema)
    const other = new Client({ name: 'someone-else', version: '1.0.0' })
    await other.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => other.close())
    expect((await other.request({ method: 'tasks/list', params: {} }, ListTasksResultV1Schema)).tasks).toEqual([])
    await expect(other.request({ method: 'tasks/get', params: { taskId: mine.tasks[0]!.taskId } }, GetTaskResultV1Schema)).rejects.toMatchObject({ code: -32602 })

    // Cancelled: the task says so, and the wait stops (the agent no longer counts as listening).
    for (const a of store.getAllPending()) await store.acknowledge(a.id) // else the watch answers at once
    const third = new Client({ name: 'cancels', version: '1.0.0' })
    await third.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => third.close())
    const session = createTaskSessionFromClient(third, { endpointId: 'marginalia-test-cancel' })
    cleanups.push(() => session.close())
    const waiting = await session.callTool('watch_annotations', { timeoutMs: 20_000 }, { requestTimeoutMs: TIMEOUT_MS, task: { preference: 'require' } })
    await until(() => server.presence().watching === 1, 'the task to be waiting')
    await waiting.cancel()
    expect(await third.request({ method: 'tasks/get', params: { taskId: waiting.handle!.taskId } }, GetTaskResultV1Schema)).toMatchObject({ status: 'cancelled' })
    await until(() => server.presence().watching === 0, 'the wait to stop')
  })
})
