import { afterEach, describe, expect, it, vi } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { openStore, type Annotation, type Reply } from '../../../src/index.js'
import { memoryStore, tempDir, deterministic } from '../../helpers/store.js'
import { connect, errorOf, structured } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()
// Registered after useCleanups, so it runs first: the closers run on real timers.
afterEach(() => {
  vi.useRealTimers()
})

type Changes = { status?: string; fromRev: number; toRev: number; currentRev: number; events: { rev: number; type: string; reply?: Reply; annotation?: { comment: string } }[]; count: number; more: boolean }
type Answer = { status: string; questionId: string; answer?: Reply; annotationId: string }

async function setup() {
  const store = memoryStore()
  const s1 = await store.createSession({ url: 'http://localhost:5173/' })
  const s2 = await store.createSession({ url: 'http://localhost:5173/about' })
  const a1 = await store.addAnnotation({ sessionId: s1.id, comment: 'Header is too tall' })
  const a2 = await store.addAnnotation({ sessionId: s2.id, comment: 'Typo' })
  const mcp = await connect(store)
  closers.push(() => mcp.close())
  return { store, mcp, s1, s2, a1, a2 }
}

describe('get_changes', () => {
  it('returns events after a rev in order, in pages, optionally for one session', async () => {
    const { store, mcp, s1, a1 } = await setup()
    await store.reply(a1.id, { author: 'human', message: 'Make it 64px' })
    await store.acknowledge(a1.id)
    const all = structured<Changes>(await mcp.call('get_changes', { sinceRev: 0 }))
    expect(all).toMatchObject({ fromRev: 0, toRev: 6, currentRev: 6, count: 6, more: false })
    expect(all.events.map((e) => e.type)).toEqual(['session.created', 'session.created', 'annotation.created', 'annotation.created', 'annotation.replied', 'annotation.status_changed'])
    expect(all.events[2]!.annotation).toMatchObject({ comment: 'Header is too tall', replyCount: 0 }) // a summary
    expect(all.events[4]!.reply).toMatchObject({ author: 'human', message: 'Make it 64px' })

    const first = structured<Changes>(await mcp.call('get_changes', { sinceRev: 0, limit: 2 }))
    expect(first).toMatchObject({ toRev: 2, count: 2, more: true })
    const next = structured<Changes>(await mcp.call('get_changes', { sinceRev: first.toRev, limit: 2 }))
    expect(next.events.map((e) => e.rev)).toEqual([3, 4])

    const one = structured<Changes>(await mcp.call('get_changes', { sinceRev: 0, sessionId: s1.id }))
    expect(one.events.map((e) => e.rev)).toEqual([1, 3, 5, 6])
    expect(one.toRev).toBe(6)
  })

  it('sinceRev after the current rev is INVALID_PARAMS naming the current rev', async () => {
    const { mcp } = await setup()
    const err = errorOf(await mcp.call('get_changes', { sinceRev: 99 }))
    expect(err.code).toBe('INVALID_PARAMS')
    expect(err.message).toContain('current rev 4')
  })

  it('a rev older than the kept window is CURSOR_EXPIRED with oldestRev and what to do', async () => {
    const { store, mcp, a1 } = await setup()
    for (let i = 0; i < 2_100; i++) await store.reply(a1.id, { author: 'agent', message: `m${i}` })
    const err = errorOf(await mcp.call('get_changes', { sinceRev: 0 }))
    expect(err.code).toBe('CURSOR_EXPIRED')
    expect(err.details).toMatchObject({ oldestRev: store.oldestAvailableRev + 1, currentRev: store.rev })
    expect(err.message).toMatch(/get_all_pending/)
  })
})

describe('watch_changes', () => {
  it('returns at once when events exist after sinceRev', async () => {
    const { mcp } = await setup()
    const r = structured<Changes>(await mcp.call('watch_changes', { sinceRev: 2, timeoutMs: 1_000 }))
    expect(r).toMatchObject({ status: 'changes', count: 2 })
  })

  it('times out with the same cursor when nothing happens', async () => {
    const { mcp } = await setup()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    const pending = mcp.call('watch_changes', { sinceRev: 4, timeoutMs: 2_000 })
    await vi.advanceTimersByTimeAsync(2_000)
    expect(structured<Changes>(await pending)).toMatchObject({ status: 'timeout', fromRev: 4, toRev: 4, events: [] })
  })

  it('wakes on a human reply written by another process', async () => {
    const { file, cleanup } = tempDir()
    closers.push(cleanup)
    const store = await openStore({ file })
    closers.push(() => store.close())
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: s.id, comment: 'Footer colour' })
    const mcp = await connect(store)
    closers.push(() => mcp.close())
    const since = store.rev
    const watching = mcp.call('watch_changes', { sinceRev: since, timeoutMs: 15_000 })
    const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../../fixtures/replier.mjs'), file, a.id, 'Use the brand green'], { stdio: 'inherit' })
    closers.push(() => child.kill('SIGKILL'))
    expect((await once(child, 'exit'))[0]).toBe(0)
    const r = structured<Changes>(await watching)
    expect(r.status).toBe('changes')
    expect(r.events).toMatchObject([{ type: 'annotation.replied', rev: since + 1, reply: { author: 'human', message: 'Use the brand green' } }])
  })
})

describe('optimistic concurrency over MCP', () => {
  it('a stale expectedRev is CONFLICT with the current rev and status; a fresh one passes', async () => {
    const { store, mcp, a1 } = await setup()
    const read = store.getAnnotation(a1.id)
    await store.reply(a1.id, { author: 'human', message: 'Also on the about page' })
    for (const [tool, args] of [
      ['acknowledge', {}],
      ['resolve', { summary: 'done' }],
      ['dismiss', { reason: 'no' }],
      ['reply', { message: 'ok' }],
    ] as const) {
      const err = errorOf(await mcp.call(tool, { id: a1.id, expectedRev: read.rev, ...args }))
      expect(err.code).toBe('CONFLICT')
      expect(err.details).toMatchObject({ currentRev: store.getAnnotation(a1.id).rev, currentStatus: 'pending', expectedRev: read.rev })
    }
    expect(store.getAnnotation(a1.id).replies).toHaveLength(1)
    const ok = structured<{ annotation: Annotation }>(await mcp.call('acknowledge', { id: a1.id, expectedRev: store.getAnnotation(a1.id).rev }))
    expect(ok.annotation.status).toBe('acknowledged')
  })
})

describe('ask and await_reply', () => {
  it('ask posts a question and returns the person’s answer', async () => {
    const { store, mcp, a1 } = await setup()
    const asking = mcp.call('ask', { id: a1.id, question: 'Should it shrink on scroll too?', timeoutMs: 10_000 })
    await vi.waitFor(() => expect(store.openQuestions()).toHaveLength(1))
    const { question } = store.openQuestions()[0]!
    expect(question).toMatchObject({ author: 'agent', kind: 'question', message: 'Should it shrink on scroll too?' })
    await store.reply(a1.id, { author: 'human', message: 'Yes, to 48px' })
    const r = structured<Answer>(await asking)
    expect(r).toMatchObject({ status: 'answered', questionId: question.id, annotationId: a1.id, answer: { author: 'human', message: 'Yes, to 48px' } })
    expect(store.openQuestions()).toEqual([])
  })

  it('agent replies do not count as answers', async () => {
    const { store, mcp, a1 } = await setup()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    const asking = mcp.call('ask', { id: a1.id, question: 'Which header?', timeoutMs: 3_000 })
    await vi.advanceTimersByTimeAsync(10)
    await store.reply(a1.id, { author: 'agent', message: 'I mean the sticky one' })
    await vi.advanceTimersByTimeAsync(3_000)
    expect(structured<Answer>(await asking).status).toBe('timeout')
  })

  it('await_reply after a timeout returns an answer that arrived meanwhile, at once', async () => {
    const { store, mcp, a1 } = await setup()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    const asking = mcp.call('ask', { id: a1.id, question: 'Mobile only?', timeoutMs: 1_000 })
    await vi.advanceTimersByTimeAsync(1_000)
    const timedOut = structured<Answer>(await asking)
    expect(timedOut.status).toBe('timeout')
    await store.reply(a1.id, { author: 'human', message: 'Desktop too' }) // nobody is waiting now
    vi.useRealTimers()
    const r = structured<Answer>(await mcp.call('await_reply', { id: a1.id, questionId: timedOut.questionId, timeoutMs: 60_000 }))
    expect(r).toMatchObject({ status: 'answered', answer: { message: 'Desktop too' } })
    const latest = structured<Answer>(await mcp.call('await_reply', { id: a1.id, timeoutMs: 60_000 }))
    expect(latest.answer?.message).toBe('Desktop too')
  })

  it('await_reply without any question, or with a wrong id, is INVALID_PARAMS', async () => {
    const { mcp, a1 } = await setup()
    expect(errorOf(await mcp.call('await_reply', { id: a1.id })).message).toContain('no question was asked')
    await mcp.call('reply', { id: a1.id, message: 'a plain reply' })
    expect(errorOf(await mcp.call('await_reply', { id: a1.id, questionId: 'rep_nope' })).code).toBe('INVALID_PARAMS')
    expect(errorOf(await mcp.call('ask', { id: 'ann_nope', question: 'x?' })).code).toBe('NOT_FOUND')
  })

  it('open questions survive a restart (they are derived from the stored replies)', async () => {
    const { file, cleanup } = tempDir()
    closers.push(cleanup)
    const first = await openStore({ file, ...deterministic() })
    const s = await first.createSession({ url: 'http://x/' })
    const a = await first.addAnnotation({ sessionId: s.id, comment: 'c' })
    await first.reply(a.id, { author: 'agent', message: 'Which one?', kind: 'question' })
    await first.close()
    const second = await openStore({ file })
    closers.push(() => second.close())
    expect(second.openQuestions().map((q) => q.question.message)).toEqual(['Which one?'])
  })
})
