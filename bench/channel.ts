/**
 * Person → channel notification: a person's annotation written by another process (the server the
 * overlay posts to, here this bench process) until the agent's `marginalia mcp --channel` has
 * pushed it to its client as `notifications/claude/channel`. The agent is the official SDK v1
 * client over stdio, as Claude Code connects.
 */
import { z } from 'zod'
import { openStore } from '../src/index.js'
import { median, percentile, realisticAnnotation, seedStore, spawnMcp, tempDir } from './lib.js'

const ChannelNotification = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
})

export async function channelLatencies(runs: number): Promise<{ p50: number; p99: number; max: number; contentBytes: number }> {
  const dir = tempDir()
  const { file, sessionId } = await seedStore(dir, 0)
  const server = await spawnMcp(dir, ['--channel'])
  const store = await openStore({ file, pollIntervalMs: 0 })
  const arrived = new Map<string, number>()
  let wake: (() => void) | undefined
  let contentBytes = 0
  server.client.setNotificationHandler(ChannelNotification, (n) => {
    arrived.set(n.params.meta.annotation_id ?? '', performance.now())
    contentBytes = Math.max(contentBytes, Buffer.byteLength(n.params.content))
    wake?.()
  })
  const latencies: number[] = []
  try {
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      const added = await store.addAnnotation(realisticAnnotation(sessionId, i))
      if (!arrived.has(added.id)) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no channel notification for ${added.id} within 10 s`)), 10_000)
          wake = () => {
            if (!arrived.has(added.id)) return
            clearTimeout(timer)
            resolve()
          }
        })
      }
      latencies.push(arrived.get(added.id)! - t0)
      await store.acknowledge(added.id)
    }
  } finally {
    await store.close()
    await server.close()
  }
  return { p50: median(latencies), p99: percentile(latencies, 99), max: Math.max(...latencies), contentBytes }
}
