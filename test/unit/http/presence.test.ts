import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { BUILTIN_TOOLS, createToolRegistry, defineTool } from '../../../src/index.js'
import { PresenceTracker, reportingCalls, TASK_POLL_LISTENING_MS } from '../../../src/http/presence.js'
import { memoryStore } from '../../helpers/store.js'

const AT = '2025-01-01T00:00:00.000Z'

/** A plugin that waits for the person until the test lets it go, tagged like the built-in waits. */
function waitingPlugin() {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const tool = defineTool({
    name: 'wait_for_person',
    title: 'Wait for the person',
    description: 'Waits until the person does something. A test plugin that stands in for a listening tool.',
    input: z.strictObject({}),
    output: z.object({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
    listening: true,
    handler: async () => {
      await gate
      return {}
    },
  })
  return { tool, release }
}

describe('presence around the registry (what serve reports to the page)', () => {
  it('the built-in tools that wait for the person are tagged listening', () => {
    expect(BUILTIN_TOOLS.filter((t) => t.listening).map((t) => t.name)).toEqual(['watch_annotations', 'watch_changes', 'ask', 'await_reply'])
  })

  it('a call of a listening tool counts as the agent listening while it runs, plugins included; other calls only mark it seen', async () => {
    const { tool, release } = waitingPlugin()
    const registry = createToolRegistry(memoryStore(), { plugins: [tool] })
    const tracker = new PresenceTracker(() => new Date(AT))
    const served = reportingCalls(registry, tracker)
    expect(served.list()).toBe(registry.list())
    expect(served.serverInfo()).toEqual(registry.serverInfo())

    const waiting = served.call('wait_for_person', {})
    expect(tracker.current()).toEqual({ connected: false, sessions: 0, agents: 0, watching: 1, lastSeenAt: AT })
    release()
    expect(await waiting).toMatchObject({ ok: true })
    expect(tracker.current().watching).toBe(0)

    expect(await served.call('list_sessions', {})).toMatchObject({ ok: true })
    expect(tracker.current().watching).toBe(0)
  })

  it('a listening tool the policy does not expose is not counted (the call fails at once)', async () => {
    const registry = createToolRegistry(memoryStore(), { deny: ['watch_annotations'] })
    const tracker = new PresenceTracker(() => new Date(AT))
    const seen: number[] = []
    const subscription = tracker.presence$.subscribe((p) => seen.push(p.watching))
    expect(await reportingCalls(registry, tracker).call('watch_annotations', {})).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TOOL' } })
    subscription.unsubscribe()
    expect(seen).toEqual([0])
  })
  describe('task polls (a 2026-07-28 task re-asks its wait without waiting)', () => {
    afterEach(() => void vi.useRealTimers())

    it('keep the agent listening between polls while the wait goes on, and stop at the poll that finds it over or when polls stop', async () => {
      vi.useFakeTimers()
      const store = memoryStore()
      const session = await store.createSession({ url: 'http://localhost:5173/' })
      const tracker = new PresenceTracker()
      const served = reportingCalls(createToolRegistry(store), tracker)
      // A wait asked not to wait still answers through a zero-delay timer: run the due ones.
      const answered = async <T>(call: Promise<T>): Promise<T> => {
        await vi.advanceTimersByTimeAsync(0)
        return call
      }
      const deadline = Date.now() + 60_000
      const poll = () => answered(served.call('watch_annotations', { timeoutMs: 60_000 }, { maxWaitMs: 0, pollDeadline: deadline }))

      expect(await poll()).toMatchObject({ ok: true, result: { status: 'timeout' } })
      expect(tracker.current().watching).toBe(1)
      // The next poll within the lease keeps it; a second task's wait counts apart.
      await vi.advanceTimersByTimeAsync(TASK_POLL_LISTENING_MS - 1_000)
      expect(await poll()).toMatchObject({ result: { status: 'timeout' } })
      const changes = { sinceRev: store.rev, timeoutMs: 5_000 }
      await answered(served.call('watch_changes', changes, { maxWaitMs: 0, pollDeadline: Date.now() + 2_000 }))
      expect(tracker.current().watching).toBe(2)
      // That one's lease never outlives its task's deadline (2 s).
      await vi.advanceTimersByTimeAsync(2_000)
      expect(tracker.current().watching).toBe(1)
      // A plain call answered without waiting (no task) is no poll: not counted after it.
      await answered(served.call('watch_changes', changes, { maxWaitMs: 0 }))
      expect(tracker.current().watching).toBe(1)

      // The annotation arrives: the poll that finds it ends that lease at once.
      await store.addAnnotation({ sessionId: session.id, comment: 'found by the task' })
      expect(await poll()).toMatchObject({ result: { status: 'annotations' } })
      expect(tracker.current().watching).toBe(0)
      // A client that stops polling stops counting once its lease runs out.
      const session2 = await store.createSession({ url: 'http://localhost:5173/b' })
      await answered(served.call('watch_annotations', { sessionId: session2.id, timeoutMs: 60_000 }, { maxWaitMs: 0, pollDeadline: deadline }))
      expect(tracker.current().watching).toBe(1)
      await vi.advanceTimersByTimeAsync(TASK_POLL_LISTENING_MS)
      expect(tracker.current().watching).toBe(0)
      tracker.complete()
      await store.close()
    })
  })
})
