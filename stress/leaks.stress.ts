import { expect, it } from 'vitest'
import { createToolRegistry } from '../src/index.js'
import { connect } from '../test/helpers/mcp.js'
import { memoryStore } from '../test/helpers/store.js'
import { activeResources, countSubscriptions, gcFunction, settledHeap, watchRound } from '../test/e2e/reliability/lib/leaks.js'
import { report } from './report.js'

it('leaks: 100 000 cancelled or timed-out watch_annotations calls, heap after each 10 000', async () => {
  const gc = gcFunction()
  const store = memoryStore()
  await store.createSession({ url: 'http://localhost:5173/' })
  const subscriptions = countSubscriptions(store)
  const registry = createToolRegistry(store)
  await watchRound(registry, 2_000, 250)
  const resourcesBefore = activeResources()
  const start = await settledHeap(gc)
  const heaps: number[] = []
  let calls = 0
  for (let round = 0; round < 10; round++) {
    calls += (await watchRound(registry, 10_000, 250)).calls
    heaps.push(await settledHeap(gc))
  }
  const resourcesAfter = activeResources()
  const figures = {
    calls,
    subscriptionsOpened: subscriptions.total,
    subscriptionsLeft: subscriptions.active,
    heapStartMB: +(start / 2 ** 20).toFixed(2),
    heapAfterEach10kMB: heaps.map((h) => +(h / 2 ** 20).toFixed(2)),
    growthMB: +((heaps.at(-1)! - start) / 2 ** 20).toFixed(2),
    resourcesBefore,
    resourcesAfter,
  }
  report('leaks/registry-100k', figures)
  expect(subscriptions.active).toBe(0)
  expect(heaps.at(-1)! - start).toBeLessThan(4 * 2 ** 20)
  await store.close()
})

it('leaks: 20 000 watch calls cancelled through the MCP client', async () => {
  const gc = gcFunction()
  const store = memoryStore()
  await store.createSession({ url: 'http://localhost:5173/' })
  const subscriptions = countSubscriptions(store)
  const mcp = await connect(store)
  const baseline = subscriptions.active
  const round = async (n: number) => {
    for (let start = 0; start < n; start += 200) {
      const batch = []
      for (let i = 0; i < 200; i++) {
        const controller = new AbortController()
        batch.push(mcp.client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 60_000 } }, undefined, { signal: controller.signal }).catch(() => {}))
        setTimeout(() => controller.abort(), i % 4)
      }
      await Promise.all(batch)
    }
    for (let t = 0; t < 100 && subscriptions.active > baseline; t++) await new Promise((r) => setTimeout(r, 5))
  }
  await round(1_000)
  const start = await settledHeap(gc)
  const heaps: number[] = []
  for (let r = 0; r < 4; r++) {
    await round(5_000)
    heaps.push(await settledHeap(gc))
  }
  const figures = {
    calls: 20_000,
    subscriptionsOpened: subscriptions.total,
    subscriptionsLeftAboveConnection: subscriptions.active - baseline,
    heapStartMB: +(start / 2 ** 20).toFixed(2),
    heapAfterEach5kMB: heaps.map((h) => +(h / 2 ** 20).toFixed(2)),
    growthMB: +((heaps.at(-1)! - start) / 2 ** 20).toFixed(2),
  }
  report('leaks/mcp-cancel-20k', figures)
  expect(subscriptions.active).toBe(baseline)
  await mcp.close()
  expect(subscriptions.active).toBe(0)
  await store.close()
})
