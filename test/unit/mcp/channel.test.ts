/** The channel's choices in-process (memory store, SDK v1 client): what is pushed, what the told ledger keeps single, the meta rules. */
import { describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import { createMemoryStore } from '../../../src/store/index.js'
import { openToldLedger } from '../../../src/store/told.js'
import { ToolRegistry } from '../../../src/tools/registry.js'
import type { IdKind } from '../../../src/store/ids.js'
import { connect } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

const ChannelNotification = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
})

/** A memory store with predictable ids (ann_1, ann_2 …), a ledger in a fresh folder, and a connected client that collects pushes. */
async function setup(countsAsTold: boolean) {
  const counters: Partial<Record<IdKind, number>> = {}
  const store = createMemoryStore({ ids: (kind) => `${kind.slice(0, 3)}_${(counters[kind] = (counters[kind] ?? 0) + 1)}` })
  cleanups.push(() => store.close())
  const dir = mkdtempSync(path.join(os.tmpdir(), 'marginalia-channel-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const ledger = openToldLedger(dir)
  // A registry that says when a call starts: from then on the session's wait holds its pushes.
  let started: () => void = () => {}
  class Signalling extends ToolRegistry {
    override call(...args: Parameters<ToolRegistry['call']>) {
      const call = super.call(...args)
      started()
      return call
    }
  }
  const registry = new Signalling(store, { burstSettleMs: 0, validateOutput: true })
  const mcp = await connect(store, { channel: { ledger, countsAsTold }, registry })
  const waitStarted = () => new Promise<void>((resolve) => (started = resolve))
  cleanups.push(() => mcp.close())
  const pushed: { content: string; meta: Record<string, string> }[] = []
  mcp.client.setNotificationHandler(ChannelNotification, (n) => void pushed.push(n.params))
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  return { store, ledger, mcp, pushed, session, waitStarted }
}

describe('the channel, in-process', () => {
  it('skips what another path told Claude Code already; pushes the rest once; never an agent-filed one', async () => {
    const { store, ledger, mcp, pushed, session } = await setup(true)
    ledger.markTold('claude:*', ['ann_1']) // the monitor printed it first
    await store.addAnnotation({ sessionId: session.id, comment: 'told by the monitor' })
    const call = await mcp.call('annotate', { sessionId: session.id, comment: 'the agent notes something', selector: 'h1' })
    expect(call.isError, JSON.stringify(call.content)).toBeFalsy()
    const third = await store.addAnnotation({ sessionId: session.id, comment: 'news' })
    await until(() => pushed.length === 1, 'one push')
    expect(pushed.map((p) => p.meta.annotation_id)).toEqual([third.id])
    expect(pushed[0]!.meta).toEqual({ annotation_id: third.id }) // no file, line or url: left out, never empty strings
    expect(ledger.untold('claude:any', [third.id])).toEqual([])
  })

  it('without countsAsTold the ledger is read but never written', async () => {
    const { store, ledger, pushed, session } = await setup(false)
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'news', url: 'http://localhost:5173/a?b=1' })
    await until(() => pushed.length === 1, 'the push')
    expect(pushed[0]!.meta).toEqual({ annotation_id: a.id, url: 'http://localhost:5173/a?b=1' })
    expect(ledger.untold('claude:s', [a.id])).toEqual([a.id])
  })

  it("a person's reply is pushed only on an annotation the agent touched, and a long comment is clipped", async () => {
    const { store, pushed, session } = await setup(true)
    const long = await store.addAnnotation({ sessionId: session.id, comment: 'x'.repeat(5_000) })
    await until(() => pushed.length === 1, 'the push')
    expect(Buffer.byteLength(pushed[0]!.content)).toBeLessThan(600)
    await store.reply(long.id, { author: 'human', message: 'still pending, nobody took it' })
    await store.acknowledge(long.id, { message: 'taking it' })
    await store.reply(long.id, { author: 'human', message: 'thanks' })
    await until(() => pushed.length === 2, 'the reply push')
    expect(pushed[1]!.content).toContain('"thanks"')
    expect(pushed.some((p) => p.content.includes('nobody took it'))).toBe(false)
  })

  it('does not push what a wait of the session returned; the wait records it for the agent, and later news is pushed', async () => {
    const { store, ledger, mcp, pushed, session, waitStarted } = await setup(true)
    const waiting = mcp.call('watch_annotations', { timeoutMs: 20_000 })
    await waitStarted()
    const watched = await store.addAnnotation({ sessionId: session.id, comment: 'while the agent listens' })
    const result = await waiting
    expect((result.structuredContent as { annotations: { id: string }[] }).annotations.map((a) => a.id)).toEqual([watched.id])
    // What the wait handed is told for this client's agent (the client calls itself test-client), in every session of it.
    expect(ledger.untold('test-client:s1', [watched.id])).toEqual([])
    expect(ledger.untold('claude:s1', [watched.id])).toEqual([watched.id])
    const later = await store.addAnnotation({ sessionId: session.id, comment: 'nobody listens now' })
    await until(() => pushed.length >= 1, 'the push of the later one')
    // Notifications keep their order: had the first been pushed when the wait ended, it would come first.
    expect(pushed.map((p) => p.meta.annotation_id)).toEqual([later.id])
  })

  it('does not push an annotation acknowledged while a wait held the push', async () => {
    const { store, mcp, pushed, waitStarted } = await setup(true)
    const elsewhere = await store.createSession({ url: 'http://localhost:5173/other' })
    const main = store.listSessions().find((s) => s.id !== elsewhere.id)!
    // The agent waits on one page; the person annotates another, and someone takes it before the wait ends.
    const waiting = mcp.call('watch_annotations', { timeoutMs: 20_000, sessionId: main.id })
    await waitStarted()
    const taken = await store.addAnnotation({ sessionId: elsewhere.id, comment: 'taken at once' })
    await store.acknowledge(taken.id, {})
    const ends = await store.addAnnotation({ sessionId: main.id, comment: 'ends the wait' })
    await waiting
    const later = await store.addAnnotation({ sessionId: elsewhere.id, comment: 'after the wait' })
    await until(() => pushed.some((p) => p.meta.annotation_id === later.id), 'the later push')
    expect(pushed.map((p) => p.meta.annotation_id)).toEqual([later.id])
    void ends
  })
})
