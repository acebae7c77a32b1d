/**
 * The inbox's "who" filters over REST (issue 23): `by` (who wrote the annotation) and `agent`
 * (which agent replied), as identity ids. `by=you` names annotations written with no identity
 * (local use, or the operator's --token), the way the inbox calls that person "you".
 *
 * The store's search (queries.ts) knows no identities yet, so this runs the store's search for
 * every status with no page, keeps what the identities match, and does the paging and the totals
 * the way the store does (same order keys, so the store's cursors work here and back). It is a
 * second pass over the matches; moving `byIds`/`agentIds` into `AnnotationSearch` would make it
 * one.
 */
import { z } from 'zod'
import { ANNOTATION_STATUSES, LIMITS, type Annotation, type AnnotationStatus } from '../store/model.js'
import { orderKey } from '../store/indexes.js'
import type { AnnotationSearch, PageOptions, SearchPage, Store } from '../store/store.js'
import { ValidationError } from '../store/errors.js'

/** Who wrote (`by`) or answered (`agents`) an annotation, as identity ids (`you`: no identity). */
export interface WhoFilter {
  by?: readonly string[]
  agents?: readonly string[]
}

/** The word for "written with no identity" (the local person). */
export const LOCAL_AUTHOR = 'you'

const ID = /^[A-Za-z0-9_-]+$/

/** A comma-separated list of identity ids (and, for `by`, `you`); the error says what one looks like. */
export function identityIds(parameter: 'by' | 'agent') {
  const example = parameter === 'by' ? 'by=idn_…,you (you: written without signing in)' : 'agent=idn_…'
  return z.string().transform((raw, ctx): string[] => {
    const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '')
    const bad = parts.find((p) => p.length > LIMITS.id || !ID.test(p) || (parameter === 'agent' && p === LOCAL_AUTHOR))
    if (parts.length === 0 || bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `${bad === undefined ? 'is empty' : `"${bad.slice(0, 40)}" is not an identity id`}: use one or more ids of ${parameter === 'by' ? 'people' : 'agents'} separated by commas, e.g. ${example}; GET /api/identities (admin) or the "by" field of annotations and replies lists them`,
      })
      return z.NEVER
    }
    return [...new Set(parts)]
  })
}

/** 400 when a known identity is of the other kind (an agent never writes annotations; a person is not an agent). */
export function checkKinds(store: Store, who: WhoFilter): void {
  const issues: { path: string; message: string }[] = []
  for (const id of who.by ?? []) {
    const identity = store.getIdentity(id)
    if (identity?.kind === 'agent') issues.push({ path: 'by', message: `"${id}" is the agent ${identity.name}: agents do not write annotations; filter on what it answered with agent=${id}` })
  }
  for (const id of who.agents ?? []) {
    const identity = store.getIdentity(id)
    if (identity?.kind === 'person') issues.push({ path: 'agent', message: `"${id}" is ${identity.name}, a person: filter on what they wrote with by=${id}` })
  }
  if (issues.length > 0) throw new ValidationError(issues, 'query')
}

/** Whether `a` was written by one of `who.by` and answered by one of `who.agents` (absent lists do not filter). */
export function matchesWho(a: Annotation, who: WhoFilter): boolean {
  if (who.by && !who.by.includes(a.by?.id ?? LOCAL_AUTHOR)) return false
  if (who.agents && !a.replies.some((r) => r.by?.kind === 'agent' && who.agents!.includes(r.by.id))) return false
  return true
}

/** `store.searchAnnotations(search, page)` narrowed by `who`, with the same paging and totals. */
export function searchWho(store: Store, search: AnnotationSearch, who: WhoFilter, page: PageOptions): SearchPage {
  const { statuses: wanted, ...rest } = search
  const everything = store.searchAnnotations(rest, {})
  const newest = search.sort === 'newest'
  const limit = page.limit ?? Infinity
  const statuses = Object.fromEntries(ANNOTATION_STATUSES.map((s) => [s, 0])) as Record<AnnotationStatus, number>
  const sessions: Record<string, number> = {}
  const items: Annotation[] = []
  let lastKey: string | undefined
  let hasMore = false
  let total = 0
  for (const a of everything.items) {
    if (!matchesWho(a, who)) continue
    statuses[a.status]++
    if (wanted && !wanted.includes(a.status)) continue
    total++
    sessions[a.sessionId] = (sessions[a.sessionId] ?? 0) + 1
    const key = orderKey(a)
    if (page.after !== undefined && (newest ? key >= page.after : key <= page.after)) continue
    if (items.length < limit) {
      items.push(a)
      lastKey = key
    } else hasMore = true
  }
  return { items, total, lastKey, hasMore, sessions, statuses }
}
