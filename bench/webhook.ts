/**
 * Person → webhook delivered: a `marginalia serve` (file store) with one endpoint on a healthy
 * loopback receiver; a person's annotation is POSTed and the clock stops when the receiver has
 * the signed `annotation.created` for it. One at a time, so each figure is one delivery's path:
 * the write, the deliverer's wake, the lease and cursor in webhooks.json, the signed POST.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { median, percentile, tempDir } from './lib.js'
import { httpPoster, startServe } from './serve-scenario.js'

export async function webhookDelivery(runs: number): Promise<{ p50: number; p95: number; runs: number }> {
  /** When each annotation's webhook arrived (performance.now()), and who waits for one not yet there. */
  const arrivals = new Map<string, number>()
  const waiting = new Map<string, () => void>()
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(204).end()
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { annotation?: { id: string } } }
      if (body.type !== 'annotation.created' || !body.data.annotation) return
      arrivals.set(body.data.annotation.id, performance.now())
      waiting.get(body.data.annotation.id)?.()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const { url, child } = await startServe(tempDir())
  try {
    const post = httpPoster(url)
    await post('/api/webhooks', { url: hook })
    const session = await post('/api/sessions', { url: 'http://localhost:5173/checkout' })
    const latencies: number[] = []
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      // The id is known once the POST answers; the webhook may have arrived before that.
      const a = await post(`/api/sessions/${session.id}/annotations`, { comment: `The Buy button is grey (${i})` })
      if (!arrivals.has(a.id)) await new Promise<void>((resolve) => waiting.set(a.id, resolve))
      latencies.push(arrivals.get(a.id)! - t0)
      waiting.delete(a.id)
    }
    return { p50: median(latencies), p95: percentile(latencies, 95), runs }
  } finally {
    child.kill('SIGTERM')
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  }
}
