/**
 * Paged reads over the published state. Every list is oldest first, ties by id (the order of
 * the index keys), and a position is an order key, so it stays valid while records are added
 * or change status.
 */
import type { Annotation, AnnotationStatus, Intent, Session, Severity } from './model.js'
import type { StoreEvent } from './events.js'
import { CursorExpiredError, NotFoundError, ValidationError } from './errors.js'
import { LOCAL_AUTHOR } from './vocabulary.js'
import { idOfKey, type Indexes, type SortedKeys } from './indexes.js'
import type { StoreState } from './reducer.js'
import { shardGet, type Shards } from './shards.js'

export interface AnnotationQuery {
  sessionId?: string
  status?: AnnotationStatus
}

export interface PageOptions {
  /** Continue after this position (an order key from a previous page's `lastKey`). */
  after?: string
  /** At most this many items (default: all). */
  limit?: number
}

/** One page of a query, oldest first. A position stays valid while records are added or change status. */
export interface Page<T> {
  items: T[]
  /** How many records match the query in all (not only after the position). */
  total: number
  /** The position of the last item: pass it as `after` for the next page. */
  lastKey?: string
  /** More records follow this page. */
  hasMore: boolean
}

export interface ChangesSinceOptions {
  /** Only events of this session. */
  sessionId?: string
  /** At most this many events (the oldest ones first). */
  limit?: number
}

/** What the queries read. */
export interface Readable {
  readonly state: StoreState
  readonly indexes: Indexes
}

/** The records of these keys, in key order. */
export function byKeys<T>(keys: Iterable<string>, shards: Shards<T>): T[] {
  const out: T[] = []
  for (const key of keys) {
    const record = shardGet(shards, idOfKey(key))
    if (record) out.push(record)
  }
  return out
}

export function mustGetSession(state: StoreState, id: string): Session {
  const s = typeof id === 'string' ? shardGet(state.sessions, id) : undefined
  if (!s) throw new NotFoundError('session', String(id))
  return s
}

/** A page of the records of `keys` (every key has a record). */
export function pageOfKeys<T>(keys: SortedKeys, shards: Shards<T>, page: PageOptions): Page<T> {
  const limit = page.limit ?? Infinity
  const { ids, lastKey, more } = keys.idsAfter(page.after, limit)
  const items: T[] = []
  for (const id of ids) {
    const record = shardGet(shards, id)
    if (record) items.push(record)
  }
  return { items, total: keys.size, lastKey, hasMore: more }
}

/**
 * A page of annotations matching the query. Pending queries and unfiltered ones read an index
 * directly; other status filters scan the matching session (or all annotations).
 */
export function pageAnnotations(live: Readable, query: AnnotationQuery, page: PageOptions): Page<Annotation> {
  const { sessionId, status } = query
  const { state, indexes } = live
  if (sessionId !== undefined) mustGetSession(state, sessionId)
  let keys: SortedKeys | undefined
  if (status === 'pending') keys = sessionId === undefined ? indexes.pending : indexes.pendingBySession.get(sessionId)
  else keys = sessionId === undefined ? indexes.annotations : indexes.annotationsBySession.get(sessionId)
  if (!keys) return { items: [], total: 0, hasMore: false }
  if (status === undefined || status === 'pending') return pageOfKeys(keys, state.annotations, page)
  return pageOfKeysWhere(keys, state.annotations, page, (a) => a.status === status)
}

/** A page of the records of `keys` that `keep` accepts: a scan of every key, for filters no index answers. */
export function pageOfKeysWhere<T>(keys: SortedKeys, shards: Shards<T>, page: PageOptions, keep: (record: T) => boolean): Page<T> {
  const limit = page.limit ?? Infinity
  const items: T[] = []
  let lastKey: string | undefined
  let hasMore = false
  let total = 0
  for (const key of keys) {
    const record = shardGet(shards, idOfKey(key))
    if (!record || !keep(record)) continue
    total++
    if (page.after !== undefined && key <= page.after) continue
    if (items.length < limit) {
      items.push(record)
      lastKey = key
    } else hasMore = true
  }
  return { items, total, lastKey, hasMore }
}

/** The orders a search can list in: by creation, oldest or newest first (ties by id, the same way round). */
export const SEARCH_SORTS = ['oldest', 'newest'] as const
type SearchSort = (typeof SEARCH_SORTS)[number]

/**
 * A search over annotations (the inbox's triage list). Every list field matches any of its
 * values; absent fields do not filter. `intents`/`severities` may hold `none` (not set).
 */
export interface AnnotationSearch {
  sessionIds?: readonly string[]
  statuses?: readonly AnnotationStatus[]
  intents?: readonly (Intent | 'none')[]
  severities?: readonly (Severity | 'none')[]
  /** Annotations with a reply by the agent, or by the person (`human`). */
  author?: 'agent' | 'human'
  /** Written by one of these identities; `LOCAL_AUTHOR` (`you`): written with no identity. */
  byIds?: readonly string[]
  /** With a reply by one of these agents (identity ids). */
  agentIds?: readonly string[]
  /** Words that must all occur (case-insensitive) in the comment, a reply or the selected text. */
  q?: string
  sort?: SearchSort
}

/** A page of a search plus totals over everything that matches (not only the page). */
export interface SearchPage extends Page<Annotation> {
  /** Matches per session (page of the app). */
  sessions: Record<string, number>
  /** Matches per status, with the status filter left out (so each status says what choosing it would show). */
  statuses: Record<AnnotationStatus, number>
}

function searchWords(q: string | undefined): string[] {
  return q === undefined ? [] : q.toLowerCase().split(/\s+/).filter((w) => w !== '')
}

function matchesWords(a: Annotation, words: readonly string[]): boolean {
  if (words.length === 0) return true
  const text = [a.comment, a.selectedText ?? '', ...a.replies.map((r) => r.message)].join('\n').toLowerCase()
  return words.every((w) => text.includes(w))
}

/** Everything but the status filter. */
function matchesSearch(a: Annotation, s: AnnotationSearch, words: readonly string[]): boolean {
  if (s.intents && !s.intents.includes(a.intent ?? 'none')) return false
  if (s.severities && !s.severities.includes(a.severity ?? 'none')) return false
  if (s.author && !a.replies.some((r) => r.author === s.author)) return false
  if (s.byIds && !s.byIds.includes(a.by?.id ?? LOCAL_AUTHOR)) return false
  if (s.agentIds && !a.replies.some((r) => r.by?.kind === 'agent' && s.agentIds!.includes(r.by.id))) return false
  return matchesWords(a, words)
}

/**
 * A page of annotations matching `search`, oldest or newest first (ties by id), continuing after
 * the position `page.after` in that order. One pass over the annotations of the chosen sessions:
 * it also counts every match per session and per status.
 */
export function searchAnnotations(live: Readable, search: AnnotationSearch, page: PageOptions): SearchPage {
  const { state, indexes } = live
  for (const id of search.sessionIds ?? []) mustGetSession(state, id)
  const lists: SortedKeys[] = search.sessionIds ? search.sessionIds.flatMap((id) => indexes.annotationsBySession.get(id) ?? []) : [indexes.annotations]
  const keys = lists.length === 1 ? [...lists[0]!] : lists.flatMap((l) => [...l]).sort()
  if (search.sort === 'newest') keys.reverse()
  const newest = search.sort === 'newest'
  const words = searchWords(search.q)
  const limit = page.limit ?? Infinity
  const statuses: Record<AnnotationStatus, number> = { pending: 0, acknowledged: 0, resolved: 0, dismissed: 0 }
  const sessions: Record<string, number> = {}
  const items: Annotation[] = []
  let lastKey: string | undefined
  let hasMore = false
  let total = 0
  for (const key of keys) {
    const a = shardGet(state.annotations, idOfKey(key))!
    if (!matchesSearch(a, search, words)) continue
    statuses[a.status]++
    if (search.statuses && !search.statuses.includes(a.status)) continue
    total++
    sessions[a.sessionId] = (sessions[a.sessionId] ?? 0) + 1
    if (page.after !== undefined && (newest ? key >= page.after : key <= page.after)) continue
    if (items.length < limit) {
      items.push(a)
      lastKey = key
    } else hasMore = true
  }
  return { items, total, lastKey, hasMore, sessions, statuses }
}

/** The oldest rev `eventsSince` can start from, given the kept window of recent events. */
export function oldestAvailableRev(recent: readonly StoreEvent[], rev: number): number {
  return recent.length > 0 ? recent[0]!.rev - 1 : rev
}

/**
 * Events after `since`, in rev order, from the kept window. A rev older than the window raises
 * CursorExpiredError naming the oldest rev still kept.
 */
export function eventsSince(recent: readonly StoreEvent[], rev: number, since: number, options: ChangesSinceOptions): StoreEvent[] {
  if (!Number.isInteger(since) || since < 0) throw new ValidationError([{ path: 'sinceRev', message: 'must be an integer ≥ 0' }])
  if (since > rev) throw new ValidationError([{ path: 'sinceRev', message: `must be at most the current rev ${rev}` }])
  const oldest = oldestAvailableRev(recent, rev)
  if (since < oldest) throw new CursorExpiredError(since, oldest + 1, rev)
  const first = recent.length > 0 ? recent[0]!.rev : rev + 1
  let events = recent.slice(since + 1 - first)
  if (options.sessionId !== undefined) events = events.filter((e) => e.sessionId === options.sessionId)
  if (options.limit !== undefined) events = events.slice(0, Math.max(0, options.limit))
  return events
}
