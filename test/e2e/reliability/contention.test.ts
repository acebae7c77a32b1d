import { describe, expect, it } from 'vitest'
import { runContention } from './lib/contention.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('contention: several processes, one store file', () => {
  it('4 processes × 250 concurrent mutations: nothing lost, final rev = start + successes, every process sees every event once, in order', async () => {
    const figures = await runContention({ processes: 4, perProcess: 250, inFlight: 20 }, cleanups)
    console.log(`contention: ${JSON.stringify(figures)}`)
    expect(figures.attempted).toBe(1_000)
    expect(figures.succeeded).toBeGreaterThan(700)
  }, 90_000)

  it('with marginalia serve on the same file taking 300 REST writes meanwhile: nothing lost, REST successes counted, its SSE client gets every event once, in order', async () => {
    const figures = await runContention({ processes: 3, perProcess: 200, inFlight: 20, serve: { writes: 300, inFlight: 16 } }, cleanups)
    console.log(`contention+serve: ${JSON.stringify(figures)}`)
    expect(figures.rest).toMatchObject({ attempted: 300, succeeded: 300, statuses: { 201: 300 }, serveExit: 0 })
    expect(figures.rest!.creates).toBeGreaterThan(100)
    expect(figures.rest!.replies).toBeGreaterThan(100)
    expect(figures.rest!.sseEvents).toBe(figures.finalRev - figures.startRev)
  }, 90_000)
})
