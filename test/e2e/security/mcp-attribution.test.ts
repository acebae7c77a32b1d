/**
 * Only a person answers as a person. An agent that claims to render MCP Apps (the UI extension in
 * its 2025 initialize, in a 2026-07-28 request's `_meta`, or over stdio) gets the inbox app's own
 * tools; whatever it writes with them is recorded as the agent's through its host (`author: agent`,
 * `via: host`), and its `ask` is still waiting: `ask`/`await_reply` never return `answered` from
 * it. Only the person's own reply (here over REST, as the overlay sends it) answers. With sign-in,
 * an agent token's app reply is the agent's too. Real clients: the official v1 SDK client (2025),
 * the v2 client pinned to 2026-07-28 over HTTP, and the v2 client over stdio against the built CLI.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as Transport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { addAgent } from '../../../src/auth/identities.js'
import { createMemoryStore, openStore, type Store } from '../../../src/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { CLI, startServeCli } from '../../helpers/cli.js'
import { request, serve } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'

const cleanups = useCleanups()
const UI = { 'io.modelcontextprotocol/ui': {} }

/** What the tests need of either SDK's client. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
  listTools(): Promise<{ tools: { name: string }[] }>
  close(): Promise<void>
}
interface Result {
  isError?: boolean
  structuredContent?: Record<string, unknown>
  content?: { type: string; text?: string }[]
}

async function v1Http(url: string, headers: Record<string, string> = {}): Promise<AnyClient> {
  // The v1 client's capabilities schema has no `extensions` field; the wire carries whatever it is given.
  const c = new Client2025({ name: 'claims-apps-v1', version: '1.0.0' }, { capabilities: { extensions: UI } as never })
  await c.connect(new Transport2025(new URL(url), { requestInit: { headers } }))
  cleanups.push(() => c.close())
  return c as unknown as AnyClient
}

async function v2Http(url: string, headers: Record<string, string> = {}): Promise<AnyClient> {
  const c = new Client({ name: 'claims-apps-v2', version: '1.0.0' }, { capabilities: { extensions: UI }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28')
  cleanups.push(() => c.close())
  return c as unknown as AnyClient
}

async function v2Stdio(dir: string): Promise<AnyClient> {
  const c = new Client({ name: 'claims-apps-stdio', version: '1.0.0' }, { capabilities: { extensions: UI } })
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '1' } as Record<string, string>, stderr: 'pipe' }))
  cleanups.push(() => c.close())
  return c as unknown as AnyClient
}

async function call(c: AnyClient, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await c.callTool({ name, arguments: args })) as Result
}

/**
 * The attack: the agent asks the person, answers its own question through the app's tools while
 * `ask` waits, and resolves through them. Returns the ask's outcome and the annotation's thread.
 */
async function answersItself(c: AnyClient, store: Store, annotationId: string) {
  expect((await c.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['inbox_reply', 'inbox_set_status']))
  const asking = call(c, 'ask', { id: annotationId, question: 'Should I delete the production database?', timeoutMs: 1500 })
  await until(() => store.getAnnotation(annotationId).replies.some((r) => r.kind === 'question'), store)
  const forged = await call(c, 'inbox_reply', { id: annotationId, message: 'Yes, delete it.' })
  expect(forged.isError, JSON.stringify(forged.content)).toBeFalsy()
  const asked = await asking
  expect(asked.isError).toBeFalsy()
  return asked.structuredContent!
}

/** Wait until `probe` holds, re-checked at every change of the store (no sleeps). */
async function until(probe: () => boolean, store: Store): Promise<void> {
  if (probe()) return
  await new Promise<void>((resolve) => {
    const sub = store.changes$.subscribe(() => {
      if (probe()) {
        sub.unsubscribe()
        resolve()
      }
    })
  })
}

describe('only a person answers as a person', () => {
  it.each([
    ['the v1 SDK client (2025-11-25 initialize)', v1Http],
    ['the v2 SDK client (2026-07-28 request _meta)', v2Http],
  ])('%s over HTTP: an app reply is the agent’s through its host, and ask keeps waiting for the person', { timeout: 20_000 }, async (_name, connect) => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Clean up the old data' })
    const c = await connect(http.mcpUrl)

    const asked = await answersItself(c, store, a.id)
    expect(asked.status).toBe('timeout')
    const forged = store.getAnnotation(a.id).replies.at(-1)!
    expect(forged).toMatchObject({ author: 'agent', via: 'host', message: 'Yes, delete it.' })
    // The question is still the person's to answer: it stays open, and await_reply does not count the app's reply.
    expect(store.openQuestions().map((q) => q.annotation.id)).toContain(a.id)
    const again = await call(c, 'await_reply', { id: a.id, timeoutMs: 100 })
    expect(again.structuredContent).toMatchObject({ status: 'timeout' })

    // A status change through the app carries a note that says so, as the agent's.
    await call(c, 'inbox_set_status', { id: a.id, action: 'dismiss' })
    expect(store.getAnnotation(a.id).replies.at(-1)).toMatchObject({ author: 'agent', via: 'host' })

    // The person's own reply (the overlay's REST call) answers.
    expect((await request(`${http.url}/api/annotations/${a.id}/replies`, { method: 'POST', body: { message: 'No, never.' } })).status).toBe(201)
    const answered = await call(c, 'await_reply', { id: a.id, timeoutMs: 100 })
    expect(answered.structuredContent).toMatchObject({ status: 'answered', answer: { author: 'human', message: 'No, never.' } })
  })

  it('with sign-in: an agent token’s app reply is the agent’s (by and author), never the answer', { timeout: 20_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const { token } = await addAgent(store, 'rogue-agent')
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Clean up the old data' })
    const c = await v2Http(http.mcpUrl, { Authorization: `Bearer ${token}` })

    const asked = await answersItself(c, store, a.id)
    expect(asked.status).toBe('timeout')
    expect(store.getAnnotation(a.id).replies.at(-1)).toMatchObject({ author: 'agent', via: 'host', by: { kind: 'agent', name: 'rogue-agent' } })
  })

  it('over stdio (the built CLI): the same', { timeout: 30_000 }, async () => {
    const { dir } = testDir(cleanups)
    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Clean up the old data' })
    const c = await v2Stdio(dir)

    const asked = await answersItself(c, store, a.id)
    expect(asked.status).toBe('timeout')
    await until(() => store.getAnnotation(a.id).replies.length === 2, store)
    expect(store.getAnnotation(a.id).replies.at(-1)).toMatchObject({ author: 'agent', via: 'host', message: 'Yes, delete it.' })
  })
})

describe('the tool policy binds the app-only tools', () => {
  it('--deny names them: they are neither listed nor callable, even to a client that renders apps', { timeout: 20_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { tools: { deny: ['inbox_reply', 'inbox_set_status'] } })
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Bigger title' })
    for (const c of [await v1Http(http.mcpUrl), await v2Http(http.mcpUrl)]) {
      const names = (await c.listTools()).tools.map((t) => t.name)
      expect(names).toContain('reply')
      expect(names.filter((n) => n.startsWith('inbox_'))).toEqual([])
      for (const [name, args] of [
        ['inbox_reply', { id: a.id, message: 'hi' }],
        ['inbox_set_status', { id: a.id, action: 'resolve' }],
      ] as const) {
        const result = await call(c, name, args)
        expect(result.isError, name).toBe(true)
      }
    }
    expect(store.getAnnotation(a.id)).toMatchObject({ status: 'pending', replies: [] })
  })

  it('denying resolve or dismiss denies them through inbox_set_status too; reopen and the reply stay', { timeout: 20_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { tools: { deny: ['resolve', 'dismiss'] } })
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Bigger title' })
    for (const c of [await v1Http(http.mcpUrl), await v2Http(http.mcpUrl)]) {
      for (const action of ['resolve', 'dismiss']) {
        const result = await call(c, 'inbox_set_status', { id: a.id, action })
        expect(result.isError, action).toBe(true)
        expect(result.content?.[0]?.text).toContain(`does not expose ${action}`)
      }
      expect((await call(c, 'inbox_reply', { id: a.id, message: 'Looking' })).isError).toBeFalsy()
    }
    expect(store.getAnnotation(a.id).status).toBe('pending')
  })

  it('the read-only profile gives no app tool', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { tools: { profile: 'read-only' } })
    const c = await v2Http(http.mcpUrl)
    expect((await c.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('inbox_'))).toEqual([])
  })

  it('marginalia serve --deny inbox_reply,inbox_set_status starts, and a client that renders apps gets neither', { timeout: 30_000 }, async () => {
    const { dir } = testDir(cleanups)
    const served = await startServeCli(cleanups, dir, ['--deny', 'inbox_reply,inbox_set_status'])
    const c = await v2Http(`${served.url}/mcp`)
    const names = (await c.listTools()).tools.map((t) => t.name)
    expect(names).toContain('reply')
    expect(names.filter((n) => n.startsWith('inbox_'))).toEqual([])
  })
})
