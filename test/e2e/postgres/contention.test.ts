/** The light contention run for npm test; the full one (4 × 500) is stress/postgres.stress.ts. */
import { it } from 'vitest'
import { describePg } from '../../helpers/pg.js'
import { contention } from './lib/contention.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const suite = await describePg('PostgreSQL contention')

suite('PostgreSQL contention (light)', () => {
  it('4 processes × 40 concurrent mutation pairs + a serve taking 20 REST writes: nothing lost, every process sees every event once, in order', async () => {
    await contention(cleanups, 4, 40, 20)
  }, 60_000)
})
