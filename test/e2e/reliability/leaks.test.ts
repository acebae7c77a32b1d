/**
 * No leaks: 10 000 watch_annotations calls cancelled or timed out leave no subscription on
 * store.changes$, no timer, no abort listener and no memory behind; the same through the MCP
 * client's AbortSignal (notifications/cancelled); and, with fake timers, no timer at all.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createToolRegistry } from '../../../src/index.js'
import { connect } from '../../helpers/mcp.js'
import { memoryStore } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { activeResources, countSubscriptions, gcFunction, settledHeap, watchRound } from './lib/leaks.js'

const cleanups = useCleanups()
// Registered after useCleanups, so it runs first: the cleanups run on real timers.
afterEach(() => {
  vi.useRealTimers()
})

describe('no leaks from cancelled or timed-out watches', () => {
  it('10 000 watch_annotations calls through registry.call: no subscription, timer, listener or memory left', async () => {
    const gc = gcFunction()
    const store = memoryStore()
    cleanups.push(() => store.close())
    await store.createSession({ url: 'http://localhost:5173/' }) // a session, no pending annotation: every watch waits
    const subscriptions = countSubscriptions(store)
    const registry = createToolRegistry(store)

    await watchRound(registry, 1_000, 200) // warm-up: JIT, caches
    const resourcesBefore = activeResources()
    const heapBefore = await settledHeap(gc)
    const round = await watchRound(registry, 10_000, 250)
    const heapAfter = await settledHeap(gc)
    const resourcesAfter = activeResources()
    const growth = heapAfter - heapBefore
    console.log(`leaks (registry.call): ${JSON.stringify({ ...round, subscriptionsOpened: subscriptions.total, subscriptionsLeft: subscriptions.active, heapBefore, heapAfter, growth, resourcesBefore, resourcesAfter })}`)

    expect(round).toMatchObject({ calls: 10_000, cancelled: 5_000, timedOut: 5_000 })
    expect(subscriptions.total).toBeGreaterThanOrEqual(10_000) // they really subscribed…
    expect(subscriptions.active).toBe(0) // …and every subscription was released
    expect(resourcesAfter.Timeout ?? 0).toBeLessThanOrEqual(resourcesBefore.Timeout ?? 0)
    expect(growth).toBeLessThan(2 * 1024 * 1024) // flat: a leak of even 200 bytes per call would show
  }, 60_000)

  it('watch_changes, ask and await_reply release everything too', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Which colour?' })
    await store.acknowledge(a.id)
    await store.reply(a.id, { author: 'agent', message: 'Blue or green?', kind: 'question' })
    // ask posts a question: one per thread, so a thread's cap on unanswered questions stays out of the way.
    const threads: string[] = []
    for (let i = 0; i < 98; i++) threads.push((await store.addAnnotation({ sessionId: session.id, comment: `Thread ${i}` })).id)
    const subscriptions = countSubscriptions(store)
    const registry = createToolRegistry(store)
    const rounds = {
      watch_changes: await watchRound(registry, 1_000, 200, 'watch_changes', { sinceRev: store.rev }),
      await_reply: await watchRound(registry, 1_000, 200, 'await_reply', { id: a.id }),
      ask: await watchRound(registry, threads.length, 49, 'ask', (i) => ({ id: threads[i], question: 'Still there?' })),
    }
    for (const round of Object.values(rounds)) expect(round.cancelled + round.timedOut).toBe(round.calls)
    expect(subscriptions.active).toBe(0)
    expect(subscriptions.total).toBeGreaterThan(1_500)
  }, 60_000)

  it('2 000 calls cancelled through the MCP client’s AbortSignal: the server lets go of each', async () => {
    const gc = gcFunction()
    const store = memoryStore()
    cleanups.push(() => store.close())
    await store.createSession({ url: 'http://localhost:5173/' })
    const subscriptions = countSubscriptions(store)
    const mcp = await connect(store)
    cleanups.push(() => mcp.close())
    const baseline = subscriptions.active // the connection's own subscription (resource notifications)
    expect(baseline).toBe(1)
    const cancelRound = async (n: number) => {
      let cancelled = 0
      for (let start = 0; start < n; start += 100) {
        const batch = []
        for (let i = start; i < start + 100; i++) {
          const controller = new AbortController()
          const call = mcp.client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 60_000 } }, undefined, { signal: controller.signal }).then(
            () => expect.fail('a watch with nothing to find returned'),
            () => void cancelled++,
          )
          setTimeout(() => controller.abort(), i % 4)
          batch.push(call)
        }
        await Promise.all(batch)
        // The server learns of each cancellation from a notification: give it a turn to unsubscribe.
        for (let t = 0; t < 50 && subscriptions.active > baseline; t++) await new Promise((r) => setTimeout(r, 2))
        expect(subscriptions.active).toBe(baseline)
      }
      return cancelled
    }
    await cancelRound(200)
    const heapBefore = await settledHeap(gc)
    const cancelled = await cancelRound(2_000)
    const heapAfter = await settledHeap(gc)
    const internals = (o: object, names: string[]) => Object.fromEntries(names.map((n) => [n, ((o as Record<string, unknown>)[n] as Map<unknown, unknown> | undefined)?.size]))
    const server = internals(mcp.server.server, ['_requestHandlerAbortControllers', '_responseHandlers', '_progressHandlers', '_timeoutInfo'])
    const client = internals(mcp.client, ['_responseHandlers', '_progressHandlers', '_timeoutInfo', '_requestHandlerAbortControllers'])
    console.log(`leaks (MCP cancel): ${JSON.stringify({ cancelled, subscriptionsOpened: subscriptions.total, subscriptionsLeft: subscriptions.active, growth: heapAfter - heapBefore, server, client })}`)
    expect(cancelled).toBe(2_000)
    expect(subscriptions.total).toBeGreaterThan(1_000) // most reached the server before their cancellation
    expect(subscriptions.active).toBe(baseline)
    for (const size of [...Object.values(server), ...Object.values(client)]) expect(size ?? 0).toBe(0)
    expect(heapAfter - heapBefore).toBeLessThan(2 * 1024 * 1024)
    expect((await mcp.call('list_sessions')).isError).toBeFalsy()
    await mcp.close()
    expect(subscriptions.active).toBe(0) // closing the connection releases its own subscription too
  }, 60_000)

  it('with fake timers: 300 watches, half cancelled, half run to their timeout, leave no timer', async () => {
    vi.useFakeTimers()
    const store = memoryStore()
    cleanups.push(() => store.close())
    await store.createSession({ url: 'http://localhost:5173/' })
    const registry = createToolRegistry(store)
    expect(vi.getTimerCount()).toBe(0)
    const controllers = Array.from({ length: 300 }, () => new AbortController())
    const calls = controllers.map((c, i) => registry.call('watch_annotations', { timeoutMs: 1 + i * 7 }, { signal: c.signal }))
    await vi.advanceTimersByTimeAsync(0)
    // Each waiting watch holds its timeout, its 500 ms poll and its 5 s progress ticker.
    expect(vi.getTimerCount()).toBe(900)
    controllers.forEach((c, i) => i % 2 === 1 && c.abort())
    await vi.advanceTimersByTimeAsync(0)
    expect(vi.getTimerCount()).toBe(450)
    await vi.advanceTimersByTimeAsync(2_200)
    const outcomes = await Promise.all(calls)
    expect(outcomes.filter((o) => !o.ok).map((o) => !o.ok && o.error.code)).toEqual(Array(150).fill('CANCELLED'))
    expect(outcomes.filter((o) => o.ok && (o.result as { status: string }).status === 'timeout')).toHaveLength(150)
    expect(vi.getTimerCount()).toBe(0)
  })
})
