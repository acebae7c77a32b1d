/**
 * One store contract suite, every adapter. `CONTRACT_ADAPTERS` is the one list of adapters the
 * suite (test/e2e/store/store.test.ts) runs against: `describeContract` declares the suite once per
 * entry, and a test inside asks `contractStore()` for a fresh store on that entry's adapter. A
 * new adapter is one entry here.
 */
import { beforeEach, describe } from 'vitest'
import { openStore, type Store, type StoreOptions } from '../../src/index.js'
import { memoryStore, deterministic, tempDir } from './store.js'
import { useCleanups } from './cleanup.js'
import { PG_URL, describePg, dropSchema, freshSchema } from './pg.js'

export interface ContractAdapter {
  /** The adapter's name: its `STORE_LOCATIONS` name (src/store/locations.ts), or `memory`. */
  name: string
  /** `describe`, or `describe.skip` with a message when the service the adapter needs is away (default: describe). */
  suite?: (name: string) => Promise<typeof describe | typeof describe.skip>
  /** A fresh, empty store; `defer` runs after the test (after the store is closed), last deferred first. */
  open(options: StoreOptions, defer: (cleanup: () => unknown) => void): Promise<Store>
}

export const CONTRACT_ADAPTERS: readonly ContractAdapter[] = [
  { name: 'memory', open: async (options) => memoryStore(options) },
  {
    name: 'file',
    open: async (options, defer) => {
      const t = tempDir()
      defer(t.cleanup)
      return openStore({ file: t.file, ...deterministic(options) })
    },
  },
  {
    name: 'postgres',
    suite: describePg,
    open: async (options, defer) => {
      const schema = freshSchema()
      defer(() => dropSchema(schema))
      return openStore({ url: PG_URL, schema, ...deterministic(options) })
    },
  },
]

let current: ContractAdapter | undefined
const cleanups = useCleanups()

/** Declare `body` (the suite's describes and tests) once per adapter in `CONTRACT_ADAPTERS`. */
export async function describeContract(body: () => void): Promise<void> {
  for (const adapter of CONTRACT_ADAPTERS) {
    const name = `the store contract on ${adapter.name}`
    const suite = adapter.suite ? await adapter.suite(name) : describe
    suite(name, () => {
      beforeEach(() => {
        current = adapter
      })
      body()
    })
  }
}

/** A fresh, empty store on the adapter of the running test, closed and removed after it. */
export async function contractStore(extra: StoreOptions = {}): Promise<Store> {
  if (!current) throw new Error('contractStore() runs inside describeContract(…)')
  const store = await current.open(extra, (cleanup) => cleanups.push(cleanup))
  cleanups.push(() => store.close().catch(() => {}))
  return store
}
