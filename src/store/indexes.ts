/**
 * Derived indexes, kept beside the immer state and updated per event, so that queries never
 * walk the whole store: sessions in order, annotations per session, pending per session and
 * pending overall. Order everywhere is oldest first, ties broken by id.
 */
import type { StoreEvent } from './events.js'
import type { StoreState } from './reducer.js'
import type { Annotation } from './model.js'
import { shardGet, shardValues } from './shards.js'
import { openQuestionOf } from './questions.js'

/**
 * Sort key: `createdAt` (fixed-width ISO-8601) + space + id. Plain string comparison of keys is
 * then exactly "oldest first, ties by id".
 */
export function orderKey(record: { createdAt: string; id: string }): string {
  return `${record.createdAt} ${record.id}`
}

export function idOfKey(key: string): string {
  return key.slice(key.indexOf(' ') + 1)
}

/** A sorted array of keys with binary-search insert and delete. */
export class SortedKeys {
  private keys: string[] = []
  /**
   * The id in each key, sliced the first time a page reads it and kept beside the key: a kept
   * string keeps its hash, so looking its record up again (on every page read) does not slice
   * and hash a new string each time.
   */
  private ids: (string | undefined)[] = []

  static from(keys: string[]): SortedKeys {
    return SortedKeys.sorted(keys.sort())
  }

  /** Keys already in order, without duplicates (taken over, not copied). */
  static sorted(keys: string[]): SortedKeys {
    const s = new SortedKeys()
    s.keys = keys
    // Filled, not holey: V8 keeps a large holey array as a dictionary.
    s.ids = keys.map(() => undefined)
    return s
  }

  get size(): number {
    return this.keys.length
  }

  /** Index of the first key ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0
    let hi = this.keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.keys[mid]! < key) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  add(key: string): void {
    const i = this.lowerBound(key)
    if (this.keys[i] === key) return
    this.keys.splice(i, 0, key)
    this.ids.splice(i, 0, undefined)
  }

  delete(key: string): void {
    const i = this.lowerBound(key)
    if (this.keys[i] !== key) return
    this.keys.splice(i, 1)
    this.ids.splice(i, 1)
  }

  /**
   * The ids of the keys strictly after `after` (or from the start), at most `limit`; the last of
   * those keys, and whether more keys follow it.
   */
  idsAfter(after?: string, limit = Infinity): { ids: string[]; lastKey: string | undefined; more: boolean } {
    const start = after === undefined ? 0 : this.upperBound(after)
    const end = Math.min(this.keys.length, start + limit)
    const ids: string[] = []
    for (let i = start; i < end; i++) ids.push((this.ids[i] ??= idOfKey(this.keys[i]!)))
    return { ids, lastKey: end > start ? this.keys[end - 1] : undefined, more: end < this.keys.length }
  }

  private upperBound(key: string): number {
    const i = this.lowerBound(key)
    return this.keys[i] === key ? i + 1 : i
  }

  *[Symbol.iterator](): Iterator<string> {
    yield* this.keys
  }
}

export class Indexes {
  readonly annotationsBySession = new Map<string, SortedKeys>()
  readonly pendingBySession = new Map<string, SortedKeys>()
  /** Annotations whose latest agent question has no human reply after it. */
  readonly openQuestions = new SortedKeys()

  constructor(
    readonly sessions = new SortedKeys(),
    readonly pending = new SortedKeys(),
    /** Every annotation of every session. */
    readonly annotations = new SortedKeys(),
  ) {}

  static build(state: StoreState): Indexes {
    const sessionKeys: string[] = []
    for (const s of shardValues(state.sessions)) sessionKeys.push(orderKey(s))
    // Sort every annotation once; each other index is a subsequence of that order, so it is
    // filled in order by one pass instead of sorted again (four sorts of 100 000 keys before).
    const entries: { key: string; a: Annotation }[] = []
    for (const a of shardValues(state.annotations)) entries.push({ key: orderKey(a), a })
    entries.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
    const bySession = new Map<string, string[]>()
    const pendingBySession = new Map<string, string[]>()
    const pending: string[] = []
    const all: string[] = new Array<string>(entries.length)
    const questions: string[] = []
    for (let i = 0; i < entries.length; i++) {
      const { key, a } = entries[i]!
      all[i] = key
      push(bySession, a.sessionId, key)
      if (a.status === 'pending') {
        push(pendingBySession, a.sessionId, key)
        pending.push(key)
      }
      if (openQuestionOf(a)) questions.push(key)
    }
    const ix = new Indexes(SortedKeys.from(sessionKeys), SortedKeys.sorted(pending), SortedKeys.sorted(all))
    for (const [sid, keys] of bySession) ix.annotationsBySession.set(sid, SortedKeys.sorted(keys))
    for (const [sid, keys] of pendingBySession) ix.pendingBySession.set(sid, SortedKeys.sorted(keys))
    for (const key of questions) ix.openQuestions.add(key)
    return ix
  }

  /** Update for one event; `before` and `after` are the states around it. */
  apply(event: StoreEvent, before: StoreState, after: StoreState): void {
    switch (event.type) {
      case 'session.created':
        this.sessions.add(orderKey(event.session))
        return
      case 'annotation.created': {
        const key = orderKey(event.annotation)
        this.annotations.add(key)
        setFor(this.annotationsBySession, event.sessionId).add(key)
        if (event.annotation.status === 'pending') this.addPending(event.sessionId, key)
        return
      }
      case 'annotation.status_changed':
      case 'annotation.replied': {
        const a = shardGet(after.annotations, event.annotationId)
        if (!a) return
        const key = orderKey(a)
        if (openQuestionOf(a)) this.openQuestions.add(key)
        else this.openQuestions.delete(key)
        if (event.type === 'annotation.replied' || (event.from === 'pending') === (event.to === 'pending')) return
        if (event.to === 'pending') this.addPending(a.sessionId, key)
        else this.deletePending(a.sessionId, key)
        return
      }
      case 'annotation.deleted':
      case 'annotation.archived': {
        const a = shardGet(before.annotations, event.annotationId)
        if (!a) return
        const key = orderKey(a)
        this.annotations.delete(key)
        this.annotationsBySession.get(a.sessionId)?.delete(key)
        this.openQuestions.delete(key)
        if (a.status === 'pending') this.deletePending(a.sessionId, key)
        return
      }
      case 'identity.added':
      case 'identity.revoked':
      case 'credential.issued':
      case 'credential.ended':
      case 'capture.requested':
      case 'capture.taken':
      case 'permission.requested':
      case 'permission.answered':
        return
      default: {
        const unknown: never = event
        throw new Error(`unknown event type ${JSON.stringify((unknown as { type?: unknown }).type)}`)
      }
    }
  }

  private addPending(sessionId: string, key: string): void {
    setFor(this.pendingBySession, sessionId).add(key)
    this.pending.add(key)
  }

  private deletePending(sessionId: string, key: string): void {
    this.pendingBySession.get(sessionId)?.delete(key)
    this.pending.delete(key)
  }
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

function setFor(map: Map<string, SortedKeys>, key: string): SortedKeys {
  let set = map.get(key)
  if (!set) map.set(key, (set = new SortedKeys()))
  return set
}

