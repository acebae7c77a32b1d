import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Annotation } from '../../../src/index.js'
import { openStore } from '../../../src/index.js'
import { DEFAULT_WATCH_TIMEOUT_MS, WATCH_POLL_INTERVAL_MS } from '../../../src/store/watch.js'
import { PROGRESS_INTERVAL_MS } from '../../../src/tools/wait.js'
import { BURST_MAX_MS, BURST_QUIET_MS } from '../../../src/tools/watch.js'
import { memoryStore, tempDir } from '../../helpers/store.js'
import { connect, errorOf, structured } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()
// Registered after useCleanups, so it runs first: the closers run on real timers.
afterEach(() => {
  vi.useRealTimers()
})

type Watch = { status: 'annotations' | 'timeout'; annotations?: Annotation[] }
const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })

async function setup() {
  const store = memoryStore()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const mcp = await connect(store)
  closers.push(() => mcp.close())
  return { store, session, mcp }
}

describe('watch_annotations', () => {
  it('has the documented constants', () => {
    expect(DEFAULT_WATCH_TIMEOUT_MS).toBe(25_000)
    expect(WATCH_POLL_INTERVAL_MS).toBe(500)
  })

  it('returns at once when annotations are pending', async () => {
    const { store, session, mcp } = await setup()
    await store.addAnnotation({ sessionId: session.id, comment: 'Already here' })
    fakeTimers()
    const r = structured<Watch>(await mcp.call('watch_annotations', {}))
    expect(r.status).toBe('annotations')
    expect(r.annotations!.map((a) => a.comment)).toEqual(['Already here'])
  })

  it('wakes on a store event without waiting for a poll tick', async () => {
    const { store, session, mcp } = await setup()
    fakeTimers()
    const pending = mcp.call('watch_annotations', { sessionId: session.id })
    await vi.advanceTimersByTimeAsync(10) // the call is now waiting; no poll tick has happened
    await store.addAnnotation({ sessionId: session.id, comment: 'New one' })
    await vi.advanceTimersByTimeAsync(BURST_QUIET_MS) // the burst window: nothing else came
    const r = structured<Watch>(await pending)
    expect(r.status).toBe('annotations')
    expect(r.annotations!.map((a) => a.comment)).toEqual(['New one'])
  })

  it('a burst comes back in one answer: 250 ms after the last annotation, without a poll tick', async () => {
    const { store, session, mcp } = await setup()
    fakeTimers()
    let answered = false
    const pending = mcp.call('watch_annotations', {}).then((r) => ((answered = true), r))
    await vi.advanceTimersByTimeAsync(10)
    for (let i = 0; i < 3; i++) {
      await store.addAnnotation({ sessionId: session.id, comment: `Burst ${i}` })
      await vi.advanceTimersByTimeAsync(150)
    }
    // The last came 150 ms ago: still inside the quiet window.
    expect(answered).toBe(false)
    await vi.advanceTimersByTimeAsync(BURST_QUIET_MS - 150 - 1)
    expect(answered).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    const r = structured<Watch>(await pending)
    expect(r.annotations!.map((a) => a.comment)).toEqual(['Burst 0', 'Burst 1', 'Burst 2'])
  })

  it('a stream that never pauses is answered 1 s after the first annotation', async () => {
    const { store, session, mcp } = await setup()
    fakeTimers()
    let answered = false
    const pending = mcp.call('watch_annotations', {}).then((r) => ((answered = true), r))
    await vi.advanceTimersByTimeAsync(10)
    for (let t = 0; t < BURST_MAX_MS; t += 200) {
      await store.addAnnotation({ sessionId: session.id, comment: `At ${t}` })
      await vi.advanceTimersByTimeAsync(200)
    }
    expect(answered).toBe(true)
    expect(structured<Watch>(await pending).annotations).toHaveLength(5)
  })

  it('with burstSettleMs: 0 it answers at the first annotation', async () => {
    const store = memoryStore()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const mcp = await connect(store, { burstSettleMs: 0 })
    closers.push(() => mcp.close())
    fakeTimers()
    const pending = mcp.call('watch_annotations', {})
    await vi.advanceTimersByTimeAsync(10)
    await store.addAnnotation({ sessionId: session.id, comment: 'First' })
    expect(structured<Watch>(await pending).annotations!.map((a) => a.comment)).toEqual(['First'])
  })

  it('wakes on the poll for a change written by another store instance on the same file', async () => {
    const { file, cleanup } = tempDir()
    closers.push(cleanup)
    // The server's store: no fs.watch and no background poll, so only the watch's own poll can find it.
    const served = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    closers.push(() => served.close())
    const session = await served.createSession({ url: 'http://localhost:5173/' })
    const other = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    closers.push(() => other.close())
    const mcp = await connect(served, { burstSettleMs: 0 }) // this test is about the poll; bursts have their own
    closers.push(() => mcp.close())

    fakeTimers()
    const pending = mcp.call('watch_annotations', { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(10)
    await other.addAnnotation({ sessionId: session.id, comment: 'Written by another process' })
    let settled = false
    void pending.then(() => (settled = true))
    await vi.advanceTimersByTimeAsync(100)
    expect(settled).toBe(false) // nothing told the server yet
    await vi.advanceTimersByTimeAsync(WATCH_POLL_INTERVAL_MS) // the poll tick syncs with the file …
    vi.useRealTimers()
    const r = structured<Watch>(await pending) // … and the synced event wakes the watch
    expect(r.status).toBe('annotations')
    expect(r.annotations!.map((a) => a.comment)).toEqual(['Written by another process'])
  })

  it('times out with {status: "timeout"}', async () => {
    const { mcp, store } = await setup()
    fakeTimers()
    const pending = mcp.call('watch_annotations', { timeoutMs: 3_000 })
    await vi.advanceTimersByTimeAsync(2_999)
    let settled = false
    void pending.then(() => (settled = true))
    await vi.advanceTimersByTimeAsync(0)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(structured<Watch>(await pending)).toEqual({ status: 'timeout', rev: store.rev })
  })

  it('uses 25 s by default', async () => {
    const { mcp } = await setup()
    fakeTimers()
    const pending = mcp.call('watch_annotations', {})
    let settled = false
    void pending.then(() => (settled = true))
    await vi.advanceTimersByTimeAsync(24_999)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(structured<Watch>(await pending).status).toBe('timeout')
  })

  it('sends progress notifications about every 5 s when the client asks', async () => {
    const { mcp } = await setup()
    fakeTimers()
    const progress: { progress: number; message?: string }[] = []
    const pending = mcp.client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 12_000 } }, undefined, {
      onprogress: (p) => progress.push(p),
      timeout: 120_000,
    })
    await vi.advanceTimersByTimeAsync(12_000)
    await pending
    expect(progress.length).toBe(Math.floor(12_000 / PROGRESS_INTERVAL_MS))
    expect(progress.map((p) => p.progress)).toEqual([1, 2])
    expect(progress[0]!.message).toMatch(/Waiting for annotations/)
  })

  it('cancellation stops every timer at once', async () => {
    const { mcp } = await setup()
    fakeTimers()
    const baseline = vi.getTimerCount()
    const controller = new AbortController()
    const pending = mcp.client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 300_000 } }, undefined, {
      signal: controller.signal,
      onprogress: () => {},
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(vi.getTimerCount()).toBeGreaterThan(baseline + 2) // poll, timeout, progress, client request timeout
    controller.abort()
    await expect(pending).rejects.toThrow()
    await vi.advanceTimersByTimeAsync(0)
    expect(vi.getTimerCount()).toBe(baseline)
  })

  it('rejects timeouts outside 1…300 000 ms and unknown sessions', async () => {
    const { mcp } = await setup()
    for (const timeoutMs of [0, -5, 300_001, 1.5, 'soon']) {
      const err = errorOf(await mcp.call('watch_annotations', { timeoutMs }))
      expect(err.code).toBe('INVALID_PARAMS')
      expect(err.message).toContain('timeoutMs')
    }
    expect(errorOf(await mcp.call('watch_annotations', { sessionId: 'ses_missing', timeoutMs: 10 })).code).toBe('NOT_FOUND')
  })
})
