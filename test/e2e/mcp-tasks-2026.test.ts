/**
 * Waits as tasks for 2026-07-28 clients (the tasks extension): the official v2 client pinned to
 * 2026-07-28 with an `@modelcontextprotocol/ext-tasks` session, its request timeout shorter than
 * the wait. The server declares the extension; each wait (watch_annotations, watch_changes, ask,
 * await_reply) is answered at once with a task, and the person acts only after the client's
 * timeout: the task settles with what the person did — over stdio (`marginalia mcp`, the built
 * CLI) and over Streamable HTTP. Refusals: a malformed, oversized or foreign task id, and a
 * client that does not declare the extension.
 */
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client'
import { openStore, type Store } from '../../src/index.js'
import { createMemoryStore } from '../../src/store/index.js'
import { addAgent } from '../../src/auth/identities.js'
import { memoryStore, testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI } from '../helpers/cli.js'
import { bearer, serve } from '../helpers/http.js'
import { connectTaskClient, envelope, type TaskClient } from '../helpers/tasks-v2.js'

const cleanups = useCleanups()
/** The client's request timeout in this test: every request must answer within it. */
const TIMEOUT_MS = 400
const TASKS = 'io.modelcontextprotocol/tasks'

interface CallResult {
  isError?: boolean
  structuredContent?: Record<string, unknown>
}

/** Call `name` as a task, then (after a plain call of it has timed out) let `act` happen: the task's result. */
async function viaTask(c: TaskClient, name: string, args: Record<string, string | number>, act: () => Promise<unknown>): Promise<CallResult> {
  const execution = await c.session.callTool(name, args, { requestTimeoutMs: TIMEOUT_MS, task: { preference: 'require' } })
  expect(execution.kind).toBe('task')
  // The same wait as a plain call dies at the client's timeout (watch_annotations: ask would post a question)…
  if (name === 'watch_annotations') await expect(c.client.callTool({ name, arguments: args }, { timeout: TIMEOUT_MS })).rejects.toThrow(/timed out|timeout/i)
  // …and only then does the person act: the task has outlived its client's timeout.
  await act()
  const { outcome } = await execution.settle()
  return resultFromTaskOutcome(outcome) as CallResult
}

async function everyWaitAsTask(c: TaskClient, person: Store, sessionId: string): Promise<void> {
  expect(c.client.getServerCapabilities()?.extensions?.[TASKS]).toEqual({})

  const watched = await viaTask(c, 'watch_annotations', { timeoutMs: 20_000 }, () => person.addAnnotation({ sessionId, comment: 'Arrived after the timeout' }))
  expect(watched.isError).toBeFalsy()
  expect(watched.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ comment: 'Arrived after the timeout' }] })
  const id = (watched.structuredContent!.annotations as { id: string }[])[0]!.id

  const rev = person.rev
  const changes = await viaTask(c, 'watch_changes', { sinceRev: rev, timeoutMs: 20_000 }, () => person.reply(id, { author: 'human', message: 'One more thing' }))
  expect(changes.structuredContent).toMatchObject({ status: 'changes', fromRev: rev })
  expect(changes.structuredContent!.count).toBeGreaterThan(0)

  // ask posts its question once, when the task is created; the person answers later.
  const asked = await viaTask(c, 'ask', { id, question: 'Which total?', timeoutMs: 20_000 }, async () => {
    await person.sync()
    const questions = person.getAnnotation(id).replies.filter((r) => r.kind === 'question')
    expect(questions.map((q) => q.message)).toEqual(['Which total?'])
    await person.reply(id, { author: 'human', message: 'The cart total' })
  })
  expect(asked.structuredContent).toMatchObject({ status: 'answered', annotationId: id, question: 'Which total?', answer: { message: 'The cart total' } })

  // await_reply: a second question (asked as a plain call that times out at once), answered later.
  const second = await c.client.callTool({ name: 'ask', arguments: { id, question: 'Which colour?', timeoutMs: 1 } })
  expect(second.structuredContent).toMatchObject({ status: 'timeout' })
  const awaited = await viaTask(c, 'await_reply', { id, timeoutMs: 20_000 }, () => person.reply(id, { author: 'human', message: 'Blue' }))
  expect(awaited.structuredContent).toMatchObject({ status: 'answered', question: 'Which colour?', answer: { message: 'Blue' } })

  // A wait that nothing ends completes at its deadline with the timeout answer.
  const quiet = await c.session.callTool('watch_changes', { sinceRev: person.rev, timeoutMs: 1_500 }, { requestTimeoutMs: TIMEOUT_MS, task: { preference: 'require' } })
  expect(((resultFromTaskOutcome((await quiet.settle()).outcome) as CallResult).structuredContent)).toMatchObject({ status: 'timeout' })

  // A call that fails at once is answered with the failure, not a task.
  const failed = (await c.raw({ method: 'tools/call', params: { name: 'await_reply', arguments: { id: 'nope' }, _meta: envelope('refusals') } })).result as { resultType: string; isError: boolean }
  expect(failed).toMatchObject({ resultType: 'complete', isError: true })
}

async function refusals(c: TaskClient, person: Store): Promise<void> {
  const created = (await c.raw({ method: 'tools/call', params: { name: 'watch_changes', arguments: { sinceRev: person.rev, timeoutMs: 60_000 }, _meta: envelope('refusals') } })).result as { resultType: string; taskId: string; status: string; ttlMs: number; pollIntervalMs: number; statusMessage: string }
  expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 1_000 })
  expect(created.ttlMs).toBeGreaterThanOrEqual(60_000)
  expect(created.statusMessage).toMatch(/Waiting for changes after rev \d+ \(60 s left\)/)
  const get = (taskId: string, tasks = true) => c.raw({ method: 'tasks/get', params: { taskId, _meta: envelope('refusals', tasks) } })

  const working = (await get(created.taskId)).result as Record<string, unknown>
  expect(working).toMatchObject({ resultType: 'complete', taskId: created.taskId, status: 'working' })
  expect(working.result).toBeUndefined()
  // Cancel and update are acknowledged (nothing runs between polls: the task ends at its deadline).
  expect((await c.raw({ method: 'tasks/cancel', params: { taskId: created.taskId, _meta: envelope('refusals') } })).result).toMatchObject({ resultType: 'complete' })
  expect((await c.raw({ method: 'tasks/update', params: { taskId: created.taskId, inputResponses: {}, _meta: envelope('refusals') } })).result).toMatchObject({ resultType: 'complete' })

  const payload = JSON.parse(Buffer.from(created.taskId.slice('mwt1_'.length), 'base64url').toString()) as Record<string, unknown>
  const forge = (change: Record<string, unknown>) => `mwt1_${Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url')}`
  const cases: [string, RegExp][] = [
    ['task_123', /taskId: not a task id of this server/],
    [`mwt1_${'A'.repeat(5_000)}`, /taskId: too long/],
    ['mwt1_!!!', /not base64url/],
    // A task names the wait its polls call: a tool that is not one of the server's waits is no task of its.
    [forge({ t: 'publish' }), /task not found/],
    [forge({ t: '../x' }), /taskId: malformed \(t:/],
    [forge({ d: (payload.c as number) + 3_600_000 }), /deadline/],
    [forge({ extra: 1 }), /malformed/],
    [forge({ o: 'someone-else' }), /task not found/],
  ]
  for (const [taskId, message] of cases) expect((await get(taskId)).error, taskId.slice(0, 40)).toMatchObject({ code: -32602, message: expect.stringMatching(message) })
  // A client that does not declare the extension: -32021, naming it.
  expect((await get(created.taskId, false)).error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } })
  // …and its waits are plain calls.
  const plain = (await c.raw({ method: 'tools/call', params: { name: 'watch_changes', arguments: { sinceRev: 0, timeoutMs: 1 }, _meta: envelope('refusals', false) } })).result as Record<string, unknown>
  expect(plain).toMatchObject({ resultType: 'complete', structuredContent: { status: 'changes' } })
  // tasks/result is not part of the extension (over HTTP the transport throws on the error status it comes with).
  const result = await c.raw({ method: 'tasks/result', params: { taskId: created.taskId, _meta: envelope('refusals') } }).catch((e: Error) => JSON.parse(/\{.*\}/.exec(e.message)![0]) as Record<string, unknown>)
  expect(result.error).toMatchObject({ code: -32601 })
}

describe('waits as tasks (2026-07-28, the tasks extension)', () => {
  it('over stdio: every wait outlives the client timeout through its task; refusals', async () => {
    const { dir } = testDir(cleanups)
    const person = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => person.close())
    const s = await person.createSession({ url: 'http://localhost:5173/' })
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '1' } as Record<string, string>, stderr: 'pipe' })
    const c = await connectTaskClient(transport, cleanups, 'tasks-stdio')
    // Between its polls the agent reads as listening in the presence file `serve` shows the page.
    const created = (await c.raw({ method: 'tools/call', params: { name: 'watch_changes', arguments: { sinceRev: person.rev, timeoutMs: 60_000 }, _meta: envelope('presence') } })).result as { taskId: string }
    expect((await c.raw({ method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope('presence') } })).result).toMatchObject({ status: 'working' })
    const presenceDir = path.join(dir, '.marginalia', 'presence')
    const announced = readdirSync(presenceDir).map((f) => JSON.parse(readFileSync(path.join(presenceDir, f), 'utf8')) as { watching?: number })
    expect(announced).toEqual([expect.objectContaining({ watching: 1 })])
    await everyWaitAsTask(c, person, s.id)
    await refusals(c, person)
  })

  it('over HTTP: the same', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const c = await connectTaskClient(new StreamableHTTPClientTransport(new URL(server.mcpUrl)), cleanups, 'tasks-http')
    await everyWaitAsTask(c, store, s.id)
    await refusals(c, store)
  })

  it('with sign-in: a task is its identity\'s; another agent polling its id gets "not found"', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const one = await addAgent(store, 'agent-one')
    const two = await addAgent(store, 'agent-two')
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const connect = (token: string, name: string) => connectTaskClient(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: bearer(token) } }), cleanups, name)
    const first = await connect(one.token, 'agent-one')
    const second = await connect(two.token, 'agent-two')
    const created = (await first.raw({ method: 'tools/call', params: { name: 'watch_annotations', arguments: { sessionId: s.id, timeoutMs: 30_000 }, _meta: envelope('agent-one') } })).result as { taskId: string }
    const get = (c: TaskClient) => c.raw({ method: 'tasks/get', params: { taskId: created.taskId, _meta: envelope('x') } })
    expect((await get(first)).result).toMatchObject({ status: 'working' })
    expect((await get(second)).error).toMatchObject({ code: -32602, message: expect.stringMatching(/task not found/) })
    expect((await second.raw({ method: 'tasks/cancel', params: { taskId: created.taskId, _meta: envelope('x') } })).error).toMatchObject({ code: -32602 })
    // The owner's task still settles.
    await store.addAnnotation({ sessionId: s.id, comment: 'For agent one' })
    expect((await get(first)).result).toMatchObject({ status: 'completed', result: { structuredContent: { status: 'annotations' } } })
  })

  it('ask runs as a plain call where await_reply is not exposed (its task would poll await_reply)', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups, { tools: { deny: ['await_reply'] } })
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: s.id, comment: 'Here' })
    const c = await connectTaskClient(new StreamableHTTPClientTransport(new URL(server.mcpUrl)), cleanups, 'no-await-reply')
    const asked = (await c.raw({ method: 'tools/call', params: { name: 'ask', arguments: { id: a.id, question: 'Which?', timeoutMs: 1 }, _meta: envelope('no-await-reply') } })).result
    expect(asked).toMatchObject({ resultType: 'complete', structuredContent: { status: 'timeout', question: 'Which?' } })
    const watched = (await c.raw({ method: 'tools/call', params: { name: 'watch_annotations', arguments: { timeoutMs: 5_000 }, _meta: envelope('no-await-reply') } })).result
    expect(watched).toMatchObject({ resultType: 'task', status: 'completed' })
  })
})
