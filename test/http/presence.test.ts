import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { BUILTIN_TOOLS, createToolRegistry, defineTool } from '../../src/index.js'
import { PresenceTracker, reportingCalls } from '../../src/http/presence.js'
import { memoryStore } from '../helpers/store.js'

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
})
