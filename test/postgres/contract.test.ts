/** The store contract suite (test/store/store.test.ts) against the PostgreSQL adapter, one schema per test. */
import { describe, it } from 'vitest'
import { useContractAdapter } from '../helpers/contract.js'
import { PG_URL, describePg, dropSchema, freshSchema } from './pg.js'

const suite = await describePg('the store contract suite on PostgreSQL')
if (suite === describe) {
  useContractAdapter('postgres', { url: PG_URL, freshSchema, dropSchema })
  await import('../store/store.test.js')
} else {
  suite('the store contract suite on PostgreSQL', () => {
    it('needs a reachable PostgreSQL', () => {})
  })
}
