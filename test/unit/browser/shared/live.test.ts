/** The browser's live stream against a server that refuses it: with a `refused` handler it stops; without, it retries. */
import { createServer } from 'node:http'
import { describe, expect, it, vi } from 'vitest'
import { LiveStream, type LiveHandlers } from '../../../../src/browser/shared/live.js'
import { listenOnLoopback } from '../../../helpers/page.js'
import { useCleanups } from '../../../helpers/cleanup.js'
import { until } from '../../../helpers/eventually.js'

const cleanups = useCleanups()

async function refusingServer(status: number) {
  let hits = 0
  const server = createServer((_req, res) => {
    hits++
    res.writeHead(status, { 'Content-Type': 'application/json' }).end('{"error":{"message":"sign in"}}')
  })
  const origin = await listenOnLoopback(server, cleanups)
  return { url: `${origin}/api/permissions/events?open=1`, hits: () => hits }
}

const quiet: LiveHandlers = { event: () => {}, reset: () => {}, presence: () => {}, open: () => {}, down: () => {} }

describe('live stream', () => {
  it('a stream refused with 401 or 403 stops when its owner says so, and is not asked for again', async () => {
    for (const status of [401, 403]) {
      const server = await refusingServer(status)
      const refused: number[] = []
      const stream = new LiveStream(server.url, 0, { ...quiet, refused: (s) => void refused.push(s) }, { retryMs: 5, maxRetryMs: 5 })
      cleanups.push(() => stream.close())
      await until(() => refused.length === 1, 'the refusal', 5_000)
      expect(refused).toEqual([status])
      // Whatever time passes, no retry was scheduled.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
      try {
        vi.advanceTimersByTime(60_000)
      } finally {
        vi.useRealTimers()
      }
      expect(server.hits()).toBe(1)
    }
  })

  it('without a refused handler, a refused stream is tried again (as the page sync wants)', async () => {
    const server = await refusingServer(401)
    let downs = 0
    const stream = new LiveStream(server.url, 0, { ...quiet, down: () => void downs++ }, { retryMs: 5, maxRetryMs: 5 })
    cleanups.push(() => stream.close())
    await until(() => server.hits() >= 2, 'a second attempt', 5_000)
    expect(downs).toBeGreaterThanOrEqual(1)
  })
})
