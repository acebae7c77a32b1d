/** The snapshot file's JSON (`store.json`): a snapshot with a format header. */
import type { Snapshot } from '../persistence.js'

export const STORE_FORMAT = 'marginalia-store'
export const STORE_FORMAT_VERSION = 1

export interface SnapshotData extends Snapshot {
  format: typeof STORE_FORMAT
  version: number
  savedAt: string
}
