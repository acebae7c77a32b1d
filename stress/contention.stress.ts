import { afterEach, expect, it } from 'vitest'
import { runContention } from '../test/e2e/reliability/lib/contention.js'
import { report } from './report.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('contention: 4 processes × 1 000 concurrent mutations', async () => {
  const figures = await runContention({ processes: 4, perProcess: 1_000, inFlight: 25 }, cleanups)
  report('contention/4x1000', figures)
  expect(figures.attempted).toBe(4_000)
})

it('contention: 4 processes × 2 500 concurrent mutations', async () => {
  const figures = await runContention({ processes: 4, perProcess: 2_500, inFlight: 50 }, cleanups)
  report('contention/4x2500', figures)
  expect(figures.attempted).toBe(10_000)
})

it('contention: 8 processes × 500 concurrent mutations', async () => {
  const figures = await runContention({ processes: 8, perProcess: 500, inFlight: 20 }, cleanups)
  report('contention/8x500', figures)
  expect(figures.attempted).toBe(4_000)
})

it('contention with serve: 4 processes × 1 500 mutations + 3 000 REST writes to marginalia serve, SSE client following', async () => {
  const figures = await runContention({ processes: 4, perProcess: 1_500, inFlight: 25, serve: { writes: 3_000, inFlight: 32 } }, cleanups)
  report('contention/4x1500+serve3000', figures)
  expect(figures.rest).toMatchObject({ attempted: 3_000, succeeded: 3_000, serveExit: 0 })
})

it('contention with serve: 8 processes × 500 mutations + 2 000 REST writes to marginalia serve, SSE client following', async () => {
  const figures = await runContention({ processes: 8, perProcess: 500, inFlight: 20, serve: { writes: 2_000, inFlight: 64 } }, cleanups)
  report('contention/8x500+serve2000', figures)
  expect(figures.rest).toMatchObject({ attempted: 2_000, succeeded: 2_000, serveExit: 0 })
})
