/** A store's id: a short, stable fingerprint of its location, so two processes can tell whether they share a store. */
import { createHash } from 'node:crypto'

export function storeId(location: string): string {
  return createHash('sha256').update(location).digest('hex').slice(0, 16)
}
