/**
 * The stateless revision (2026-07-28) with the official v2 client: pinned to it, a whole agent
 * session (watch, acknowledge, reply, ask, await_reply, resolve) over stdio (`marginalia mcp`, the
 * built CLI) and over Streamable HTTP (`/mcp`), every structuredContent valid against its tool's
 * outputSchema; in auto mode the client negotiates 2026-07-28 itself; the 2025 client still gets
 * its session on the same endpoint.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Ajv } from 'ajv'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Transport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { openStore, type Store } from '../../src/index.js'
import { memoryStore, testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI } from '../helpers/cli.js'
import { serve } from '../helpers/http.js'
import { until } from '../helpers/eventually.js'

const cleanups = useCleanups()
const MODERN = '2026-07-28'

type Mode = 'auto' | { pin: string }

function client(mode: Mode): Client {
  return new Client({ name: `v2-${typeof mode === 'string' ? mode : 'pinned'}`, version: '1.0.0' }, { versionNegotiation: { mode } })
}

/**
 * Calls a tool and checks what a client relies on: no error, structuredContent valid against the
 * listed outputSchema (a mutation lists none: its answer is its line, its structuredContent the record).
 */
function caller(c: Client, schemas: Map<string, object | undefined>) {
  const ajv = new Ajv({ strict: false })
  return async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const result = await c.callTool({ name, arguments: args })
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy()
    const schema = schemas.get(name)
    expect(schema === undefined, `${name} lists an outputSchema unless it is a mutation`).toBe(['acknowledge', 'resolve', 'dismiss', 'reply'].includes(name))
    if (schema === undefined) return result.structuredContent as Record<string, unknown>
    const validate = ajv.compile(schema)
    expect(validate(result.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true)
    return result.structuredContent as Record<string, unknown>
  }
}

/**
 * The agent's session against `person` (the store the browser writes to): an annotation arrives
 * while the agent watches; it acknowledges, replies, asks and gets the answer, waits for a second
 * answer with await_reply, and resolves.
 */
async function agentSession(c: Client, person: Store, sessionId: string): Promise<void> {
  const { tools } = await c.listTools()
  const call = caller(c, new Map(tools.map((t) => [t.name, t.outputSchema])))

  const watching = call('watch_annotations', { timeoutMs: 10_000 })
  await person.addAnnotation({ sessionId, comment: 'The total is misaligned', element: { selector: '.total' } })
  const watched = await watching
  expect(watched).toMatchObject({ status: 'annotations', annotations: [{ comment: 'The total is misaligned' }] })
  const id = (watched.annotations as { id: string }[])[0]!.id

  expect(await call('acknowledge', { id })).toMatchObject({ annotation: { id, status: 'acknowledged' } })
  await call('reply', { id, message: 'Looking at the grid now.' })

  const answer = async (message: string, questions: number): Promise<void> => {
    await until(async () => {
      await person.sync()
      return person.getAnnotation(id).replies.filter((r) => r.kind === 'question').length >= questions
    }, 'the question')
    await person.reply(id, { author: 'human', message })
  }
  const [asked] = await Promise.all([call('ask', { id, question: 'Left or right aligned?', timeoutMs: 10_000 }), answer('Right, please.', 1)])
  expect(JSON.stringify(asked)).toContain('Right, please.')

  // A second answer, waited for with await_reply (the answer may land before or during the wait).
  await person.reply(id, { author: 'agent', message: 'And the currency sign?', kind: 'question' })
  const [awaited] = await Promise.all([call('await_reply', { id, timeoutMs: 10_000 }), answer('Before the number.', 2)])
  expect(JSON.stringify(awaited)).toContain('Before the number.')

  expect(await call('resolve', { id, summary: 'Right-aligned the total.' })).toMatchObject({ annotation: { id, status: 'resolved' } })
  await person.sync()
  expect(person.getAnnotation(id).status).toBe('resolved')
}

function stdioTransport(dir: string): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '1' } as Record<string, string>, stderr: 'pipe' })
}

describe('MCP 2026-07-28 over stdio (marginalia mcp)', () => {
  it('a client pinned to 2026-07-28 connects without initialize and runs an agent session', async () => {
    const { dir } = testDir(cleanups)
    const person = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => person.close())
    const session = await person.createSession({ url: 'http://localhost:5173/' })
    const c = client({ pin: MODERN })
    await c.connect(stdioTransport(dir))
    cleanups.push(() => c.close())
    expect(c.getNegotiatedProtocolVersion()).toBe(MODERN)
    expect(c.getServerVersion()?.name).toBe('marginalia')
    await agentSession(c, person, session.id)
  })

  it('a client in auto mode negotiates 2026-07-28; subscriptions/listen carries the changes of the URIs it names', async () => {
    const { dir } = testDir(cleanups)
    const person = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => person.close())
    const session = await person.createSession({ url: 'http://localhost:5173/' })
    const other = await person.createSession({ url: 'http://localhost:5173/other' })
    const c = client('auto')
    await c.connect(stdioTransport(dir))
    cleanups.push(() => c.close())
    expect(c.getNegotiatedProtocolVersion()).toBe(MODERN)
    expect((await c.callTool({ name: 'list_sessions', arguments: {} })).structuredContent).toMatchObject({ count: 2 })

    const updated: string[] = []
    c.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri))
    const uri = `marginalia://sessions/${session.id}`
    const subscription = await c.listen({ resourceSubscriptions: [uri] })
    cleanups.push(() => subscription.close())
    await person.addAnnotation({ sessionId: other.id, comment: 'Not listened to' })
    await person.addAnnotation({ sessionId: session.id, comment: 'Heard by the listener' })
    await until(() => updated.includes(uri), 'notifications/resources/updated on the listen stream')
    expect(updated.every((u) => u === uri)).toBe(true)
  })
})

describe('MCP 2026-07-28 over Streamable HTTP (/mcp)', () => {
  it('a pinned client runs an agent session with no session id; a 2025 client gets its session on the same endpoint', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const session = await store.createSession({ url: 'http://localhost:5173/' })

    const c = client({ pin: MODERN })
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl))
    await c.connect(transport)
    cleanups.push(() => c.close())
    expect(c.getNegotiatedProtocolVersion()).toBe(MODERN)
    // Presence is per agent: a stateless client inside a wait shows as listening.
    const watching = c.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 10_000 } })
    await until(() => server.presence().watching === 1, 'the watch to start')
    expect(server.presence()).toMatchObject({ connected: true, sessions: 0, agents: 1, watching: 1 })
    await store.addAnnotation({ sessionId: session.id, comment: 'Seen while listening' })
    expect((await watching).structuredContent).toMatchObject({ status: 'annotations' })
    await c.callTool({ name: 'acknowledge', arguments: { id: store.getAllPending()[0]!.id } })
    await agentSession(c, store, session.id)
    expect(transport.sessionId).toBeUndefined()
    // Stateless: no MCP session was opened; the agent still counts as present.
    expect(server.presence()).toMatchObject({ sessions: 0, connected: true, agents: 1 })

    const old = new Client2025({ name: 'v1', version: '1.0.0' })
    const oldTransport = new Transport2025(new URL(server.mcpUrl))
    await old.connect(oldTransport)
    cleanups.push(() => old.close())
    expect(oldTransport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(old.getServerVersion()?.name).toBe('marginalia')
    expect((await old.callTool({ name: 'list_sessions', arguments: {} })).structuredContent).toMatchObject({ count: 1 })
    expect(server.presence()).toMatchObject({ sessions: 1, agents: 2 })
  })

  it('a client in auto mode negotiates 2026-07-28; subscriptions/listen delivers resource changes', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const c = client('auto')
    await c.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => c.close())
    expect(c.getNegotiatedProtocolVersion()).toBe(MODERN)

    const updated: string[] = []
    c.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri))
    const uri = `marginalia://sessions/${session.id}`
    const subscription = await c.listen({ resourceSubscriptions: [uri] })
    cleanups.push(() => subscription.close())
    await store.addAnnotation({ sessionId: session.id, comment: 'Heard by the listener' })
    await until(() => updated.includes(uri), 'notifications/resources/updated on the listen stream')
    expect(updated.every((u) => u === uri)).toBe(true)
  })
})
