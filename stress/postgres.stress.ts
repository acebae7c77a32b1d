/** The full PostgreSQL contention run (issue #22): 4 processes × 500 concurrent mutation pairs + a serve taking 200 REST writes. */
import { afterEach, it } from 'vitest'
import { describePg } from '../test/postgres/pg.js'
import { contention } from '../test/postgres/lib/contention.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const suite = await describePg('PostgreSQL contention (stress)')

suite('PostgreSQL contention (stress)', () => {
  it('4 processes × 500 mutation pairs + 200 REST writes on one schema', async () => {
    const { rev, ms } = await contention(cleanups, 4, 500, 200)
    console.error(`postgres contention: ${rev} events in ${ms} ms (${Math.round((rev * 1000) / ms)} events/s)`)
  })
})
