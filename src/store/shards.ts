/**
 * A two-level hashed map of records, shaped for immer.
 *
 * immer copies (and re-scans) every container it touches, so one flat `Record<id, Annotation>`
 * makes each mutation O(store size): measured ~130 ms per `produce` at 100 000 annotations.
 * Hashing ids into 32 × 32 buckets keeps every touched container small, so a mutation touches
 * two 32-slot arrays and one bucket of ~100 records at 100 000: measured ~0.15 ms.
 */
import type { Draft } from 'immer'

const FANOUT = 32
type Bucket<T> = Readonly<Record<string, T>>
export type Shards<T> = readonly (readonly Bucket<T>[])[]

/** FNV-1a, 32 bit: cheap and well spread for short ids. */
function hash(id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

function slot(id: string): [number, number] {
  const h = hash(id)
  return [h % FANOUT, (h >>> 5) % FANOUT]
}

export function emptyShards<T>(): Shards<T> {
  return Array.from({ length: FANOUT }, () => Array.from({ length: FANOUT }, () => ({}) as Bucket<T>))
}

export function shardsFrom<T extends { id: string }>(records: Iterable<T>): Shards<T> {
  const shards = Array.from({ length: FANOUT }, () => Array.from({ length: FANOUT }, () => ({}) as Record<string, T>))
  for (const record of records) {
    const [a, b] = slot(record.id)
    shards[a]![b]![record.id] = record
  }
  return shards
}

export function shardGet<T>(shards: Shards<T>, id: string): T | undefined {
  const [a, b] = slot(id)
  const bucket = shards[a]![b]!
  // The plain read first: a miss (most lookups of absent ids) costs one lookup, and a hit is
  // confirmed as the bucket's own key so an id like `constructor` never reads the prototype.
  const record = bucket[id]
  return record !== undefined && Object.hasOwn(bucket, id) ? record : undefined
}

/** Mutating helpers for use inside an immer recipe. */
export function draftGet<T>(shards: Draft<Shards<T>>, id: string): Draft<T> | undefined {
  const [a, b] = slot(id)
  const bucket = (shards as unknown as Record<string, Draft<T>>[][])[a]![b]!
  return Object.hasOwn(bucket, id) ? bucket[id] : undefined
}

export function draftSet<T>(shards: Draft<Shards<T>>, id: string, value: T): void {
  const [a, b] = slot(id)
  ;(shards as unknown as Record<string, T>[][])[a]![b]![id] = value
}

export function draftDelete<T>(shards: Draft<Shards<T>>, id: string): void {
  const [a, b] = slot(id)
  delete (shards as unknown as Record<string, T>[][])[a]![b]![id]
}

export function* shardValues<T>(shards: Shards<T>): Generator<T> {
  for (const level of shards) for (const bucket of level) for (const id in bucket) yield bucket[id]!
}
