/**
 * One store contract suite, three adapters. A contract test file asks `contractStore()` for a
 * store; run on its own it gets a memory store, and the per-adapter entry files
 * (test/store/contract-file.test.ts, test/postgres/contract.test.ts) choose an adapter and import
 * the suite, so the same tests run against the file and PostgreSQL adapters.
 */
import { openStore, type Store, type StoreOptions } from '../../src/index.js'
import { memoryStore, deterministic, tempDir } from './store.js'
import { useCleanups } from './cleanup.js'

export type ContractAdapter = 'memory' | 'file' | 'postgres'

let current: ContractAdapter = 'memory'
let postgres: { url: string; freshSchema: () => string; dropSchema: (schema: string) => Promise<void> } | null = null
const cleanups = useCleanups()

export function useContractAdapter(adapter: ContractAdapter, pg?: typeof postgres): void {
  current = adapter
  postgres = pg ?? null
}

/** A fresh, empty store on the current adapter, closed and removed after the test. */
export async function contractStore(extra: StoreOptions = {}): Promise<Store> {
  if (current === 'memory') return memoryStore(extra)
  if (current === 'file') {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = await openStore({ file: t.file, ...deterministic(extra) })
    cleanups.push(() => store.close().catch(() => {}))
    return store
  }
  if (!postgres) throw new Error('useContractAdapter("postgres", …) needs the connection')
  const { url, freshSchema, dropSchema } = postgres
  const schema = freshSchema()
  cleanups.push(() => dropSchema(schema))
  const store = await openStore({ url, schema, ...deterministic(extra) })
  cleanups.push(() => store.close().catch(() => {}))
  return store
}
