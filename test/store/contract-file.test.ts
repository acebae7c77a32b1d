/** The store contract suite (store.test.ts) against the file adapter. */
import { useContractAdapter } from '../helpers/contract.js'

useContractAdapter('file')
await import('./store.test.js')
