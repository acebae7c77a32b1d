/**
 * Page cursors: an opaque string that encodes a position in the store's order (an order key,
 * `<createdAt> <id>`), not an offset, so it stays valid while records are added or change status.
 * The store owns the key format, so it owns the encoding; tools, REST and resources import it.
 */
import { ValidationError } from './errors.js'
import { orderKey } from './indexes.js'

const PREFIX = 'c1.'
const KEY = /^\d{4}-\d{2}-\d{2}T[\d:.]+Z \S+$/

/** The cursor of a position (an order key). */
export function encodeCursor(key: string): string {
  return PREFIX + Buffer.from(key, 'utf8').toString('base64url')
}

/** The cursor that continues after `record`. */
export function cursorAfter(record: { createdAt: string; id: string }): string {
  return encodeCursor(orderKey(record))
}

/** The position a cursor encodes; undefined stays undefined. A cursor not made here is INVALID_PARAMS. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  const key = cursor.startsWith(PREFIX) ? Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8') : ''
  if (!KEY.test(key)) throw new ValidationError([{ path: 'cursor', message: 'is not a cursor from this server; start again without one' }])
  return key
}
