/**
 * No wait outlasts a client's default request timeout: every waiting tool is clamped to the
 * server's max wait (55 s by default, under the official SDK clients' 60 s), sends progress while
 * it waits, and its empty answer says how to continue without missing anything.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { parseWaitFlags, TOOL_POLICY_USAGE } from '../../../src/cli/tool-flags.js'
import { createToolRegistry } from '../../../src/tools/registry.js'
import { DEFAULT_MAX_WAIT_MS, PROGRESS_INTERVAL_MS } from '../../../src/tools/wait.js'
import { CLI } from '../../helpers/cli.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { connect, structured } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()
// Registered after useCleanups, so it runs first: the closers run on real timers.
afterEach(() => {
  vi.useRealTimers()
})

const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })

async function setup(options: { maxWaitMs?: number } = {}) {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const annotation = await store.addAnnotation({ sessionId: session.id, comment: 'Header is too tall' })
  await store.acknowledge(annotation.id) // nothing pending: watch_annotations waits
  const mcp = await connect(store, { burstSettleMs: 0, ...options })
  closers.push(() => mcp.close())
  return { store, session, annotation, mcp }
}

const textOf = (r: CallToolResult) => (r.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n')

describe('every wait is clamped to the server max wait', () => {
  it('is 55 s by default, under the v1 and v2 SDK clients’ 60 s request timeout', () => {
    expect(DEFAULT_MAX_WAIT_MS).toBe(55_000)
    expect(DEFAULT_MAX_WAIT_MS).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC)
  })

  const waits = (ids: { sessionId: string; annotationId: string; rev: number }) =>
    [
      ['watch_annotations', { timeoutMs: 300_000 }],
      ['watch_changes', { sinceRev: ids.rev, timeoutMs: 300_000 }],
      ['ask', { id: ids.annotationId, question: 'Which header?', timeoutMs: 300_000 }],
      ['await_reply', { id: ids.annotationId, timeoutMs: 300_000 }],
    ] as const

  it('a 300 s timeoutMs answers at 55 s, with progress every 5 s, and the v1 client with its default timeout never times out', async () => {
    const { store, session, annotation, mcp } = await setup()
    await store.reply(annotation.id, { author: 'agent', message: 'Which one?', kind: 'question' }) // await_reply has a question to wait on
    fakeTimers()
    for (const [name, args] of waits({ sessionId: session.id, annotationId: annotation.id, rev: store.rev })) {
      const callArgs = args
      const progress: number[] = []
      let settled = false
      // No `timeout` and no resetTimeoutOnProgress: the client's defaults.
      const pending = mcp.client.callTool({ name, arguments: callArgs }, undefined, { onprogress: (p) => progress.push(p.progress) }).finally(() => (settled = true))
      await vi.advanceTimersByTimeAsync(DEFAULT_MAX_WAIT_MS - 1)
      expect(settled, name).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      const r = (await pending) as CallToolResult
      expect(r.isError, name).toBeFalsy()
      expect((structured<{ status: string }>(r)).status, name).toBe('timeout')
      // The answer says the wait was cut: requested vs granted, in the structured answer and the text.
      expect(structured<{ clamped?: unknown }>(r).clamped, name).toEqual({ requestedMs: 300_000, grantedMs: DEFAULT_MAX_WAIT_MS })
      expect(textOf(r), name).toContain("It waited 55 s, not the 300 s asked (the server's maximum, --max-wait-ms).")
      expect(progress.length, name).toBeGreaterThanOrEqual(Math.floor((DEFAULT_MAX_WAIT_MS - 1) / PROGRESS_INTERVAL_MS)) // one every 5 s
    }
  })

  it('a wait shorter than the max is kept, and a default wait is 25 s', async () => {
    const { mcp } = await setup()
    fakeTimers()
    let settled = false
    const pending = mcp.call('watch_annotations', { timeoutMs: 3_000 }).finally(() => (settled = true))
    await vi.advanceTimersByTimeAsync(2_999)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    const answer = structured<{ status: string; clamped?: unknown }>(await pending)
    expect(answer.status).toBe('timeout')
    expect(answer).not.toHaveProperty('clamped') // not cut: nothing said
  })

  it('the embedder option sets another max (a default wait is clamped too), and a bad one is refused naming the field', async () => {
    const { mcp } = await setup({ maxWaitMs: 2_000 })
    fakeTimers()
    for (const args of [{}, { timeoutMs: 60_000 }]) {
      let settled = false
      const pending = mcp.call('watch_annotations', args).finally(() => (settled = true))
      await vi.advanceTimersByTimeAsync(1_999)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(structured<{ status: string }>(await pending).status).toBe('timeout')
    }
    vi.useRealTimers()
    for (const maxWaitMs of [0, 1.5, 300_001]) expect(() => createToolRegistry(memoryStore(), { maxWaitMs })).toThrow(/maxWaitMs/)
  })

  it('marginalia mcp --max-wait-ms 300: a 60 s watch over stdio answers empty after 300 ms', async () => {
    vi.useRealTimers()
    const { dir } = testDir(closers, 'marginalia-maxwait-')
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', path.join(dir, 'store.json'), '--max-wait-ms', '300'], stderr: 'pipe' }))
    closers.push(() => client.close())
    const t0 = performance.now()
    const r = (await client.callTool({ name: 'watch_changes', arguments: { sinceRev: 0, timeoutMs: 60_000 } })) as CallToolResult
    const ms = performance.now() - t0
    expect(structured<{ status: string }>(r).status).toBe('timeout')
    expect(ms).toBeGreaterThanOrEqual(290)
    expect(ms).toBeLessThan(10_000) // far from the 60 s asked for
  })

  it('--max-wait-ms sets it on mcp and serve; a wrong value names the flag', () => {
    expect(parseWaitFlags({ 'max-wait-ms': '30000' })).toEqual({ maxWaitMs: 30_000 })
    expect(parseWaitFlags({ 'max-wait-ms': '300000', 'burst-ms': '0' })).toEqual({ maxWaitMs: 300_000, burstSettleMs: 0 })
    expect(parseWaitFlags({})).toEqual({})
    for (const bad of ['0', '300001', 'soon', '-5']) expect(() => parseWaitFlags({ 'max-wait-ms': bad })).toThrow(/--max-wait-ms: .* whole number of ms from 1 to 300000/)
    expect(TOOL_POLICY_USAGE.join('\n')).toMatch(/--max-wait-ms N .*default 55000/)
  })
})

describe('an empty answer says how to continue, and continuing misses nothing', () => {
  it('watch_changes: call again from toRev; a change made between the two calls comes back', async () => {
    const { store, annotation, mcp } = await setup()
    fakeTimers()
    const pending = mcp.call('watch_changes', { sinceRev: store.rev, timeoutMs: 120_000 })
    await vi.advanceTimersByTimeAsync(DEFAULT_MAX_WAIT_MS)
    const first = await pending
    const empty = structured<{ status: string; toRev: number }>(first)
    expect(empty.status).toBe('timeout')
    expect(textOf(first)).toContain(`Call again with sinceRev ${empty.toRev}: nothing after it is missed.`)
    await store.reply(annotation.id, { author: 'human', message: 'The top one' }) // between the two calls
    const next = structured<{ status: string; events: { type: string }[] }>(await mcp.call('watch_changes', { sinceRev: empty.toRev, timeoutMs: 120_000 }))
    expect(next.status).toBe('changes')
    expect(next.events.map((e) => e.type)).toEqual(['annotation.replied'])
  })

  it('watch_annotations: call again (pending work stays pending), or follow replies from its rev', async () => {
    const { store, session, mcp } = await setup()
    fakeTimers()
    const pending = mcp.call('watch_annotations', { timeoutMs: 120_000 })
    await vi.advanceTimersByTimeAsync(DEFAULT_MAX_WAIT_MS)
    const first = await pending
    const { rev } = structured<{ rev: number }>(first)
    expect(textOf(first)).toContain(`Call watch_annotations again: work that arrives meanwhile stays pending (replies and status changes since: watch_changes with sinceRev ${rev}).`)
    await store.addAnnotation({ sessionId: session.id, comment: 'Made between the calls' })
    const next = structured<{ status: string; annotations: { comment: string }[] }>(await mcp.call('watch_annotations', {}))
    expect(next.annotations.map((a) => a.comment)).toEqual(['Made between the calls'])
  })

  it('ask: await_reply with the questionId; an answer given between the calls is returned', async () => {
    const { store, annotation, mcp } = await setup()
    fakeTimers()
    const pending = mcp.call('ask', { id: annotation.id, question: 'Which header?', timeoutMs: 120_000 })
    await vi.advanceTimersByTimeAsync(DEFAULT_MAX_WAIT_MS)
    const first = await pending
    const { questionId } = structured<{ questionId: string }>(first)
    expect(textOf(first)).toContain(`Call await_reply with questionId "${questionId}"`)
    await store.reply(annotation.id, { author: 'human', message: 'The sticky one' })
    const next = structured<{ status: string; answer: { message: string } }>(await mcp.call('await_reply', { id: annotation.id, questionId }))
    expect(next).toMatchObject({ status: 'answered', answer: { message: 'The sticky one' } })
  })
})
