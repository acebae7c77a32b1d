/**
 * Pages sized for a client's context: a limit, an opaque cursor that encodes a position (not an
 * offset, so it survives additions and status changes; see store/cursor.ts), and a hard byte
 * budget per result. The MCP tools and resources send these pages; REST shares the limits.
 */
import { z } from 'zod'
import type { Annotation } from '../store/model.js'
import type { Page } from '../store/store.js'
import { cursorAfter } from '../store/cursor.js'
import { AnnotationItem, type Detail, groupLine, itemOf, renderLine, type AnnotationSummary } from './summary.js'
import { keptJson } from './json.js'

export const DEFAULT_PAGE_LIMIT = 100
const MAX_PAGE_LIMIT = 500
export const DEFAULT_BYTE_BUDGET = 80 * 1024
/** Big enough for any one full record without its replies (about 32 KB of fields, sent twice). */
export const MIN_BYTE_BUDGET = 16 * 1024

export const Limit = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_PAGE_LIMIT, `must be at most ${MAX_PAGE_LIMIT}`)
  .describe(`Page size (default ${DEFAULT_PAGE_LIMIT})`)
export const Cursor = z.string().min(1).max(1_000).describe('From nextCursor')

export const pageOutput = {
  annotations: z.array(AnnotationItem),
  count: z.number().int().describe('Annotations in this page').meta({ listed: false }),
  total: z.number().int().describe('Annotations matching the query in all'),
  nextCursor: z.string().optional().describe('Present when more follow: pass it as cursor'),
  truncated: z.literal('byte_budget').optional().describe('This page was cut short to stay under the byte budget').meta({ listed: false }),
}
export type PageResult = z.infer<z.ZodObject<typeof pageOutput>>

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))

/**
 * A full record that would not fit the budget on its own (its replies are unbounded) keeps its
 * newest replies that fit; `omittedReplies` says how many older ones were left out.
 */
export function fitAnnotation(a: Annotation, budget: number): { annotation: Annotation; omittedReplies?: number } {
  // Both the structured JSON and its text copy travel: twice the bytes, plus the envelope.
  const room = (budget - 2_000) / 2.4 // the text copy is a JSON string: escaping adds up to ~20 %
  if (bytes(a) <= room) return { annotation: a }
  const base = bytes({ ...a, replies: [] })
  let used = base
  let kept = 0
  for (let i = a.replies.length - 1; i >= 0; i--) {
    const cost = bytes(a.replies[i]) + 1
    if (used + cost > room) break
    used += cost
    kept++
  }
  return { annotation: { ...a, replies: a.replies.slice(a.replies.length - kept) }, omittedReplies: a.replies.length - kept }
}

/**
 * Turn a store page into a result that fits `budget` bytes on the wire (structured JSON plus its
 * text rendering), dropping items from the end if needed and saying so.
 */
export function fitPage(page: Page<Annotation>, detail: Detail, budget: number): PageResult {
  const items = page.items.map((a) => itemOf(a, detail))
  // Fixed part: envelope, header, a session line, footer and a cursor — generously estimated.
  let used = 2_000
  let fit = 0
  let group = ''
  for (const item of items) {
    let cost = wireCost(item, detail)
    if (detail !== 'full') {
      const header = groupLine(item as AnnotationSummary)
      if (header !== group) cost += bytes(header)
      group = header
    }
    if (used + cost > budget) break
    used += cost
    fit++
  }
  if (fit === 0 && items.length > 0) {
    // One record alone is over the budget (a full record with a very long thread): trim its replies.
    fit = 1
    items[0] = detail === 'full' ? fitAnnotation(page.items[0]!, budget).annotation : items[0]!
  }
  return pageResult(page, items, fit)
}

/** Bytes per item, kept per immutable item (summary or record): a page is sized by adding them up. */
const wireCosts = new WeakMap<object, number>()

/**
 * What one item adds to a result on the wire: its JSON in the structured part, plus its copy in
 * the text part as that travels (a JSON string: quotes, newlines and the like escaped) — a line
 * for a summary, the same JSON again for a full record — plus separators.
 */
function wireCost(item: AnnotationItem, detail: Detail): number {
  let cost = wireCosts.get(item)
  if (cost === undefined) {
    // A summary keeps its JSON: the stdio server sends a page by joining them (views/json.ts). A
    // full record does not (it is large, and full pages are rare).
    const json = detail === 'full' ? JSON.stringify(item) : keptJson(item)
    cost = Buffer.byteLength(json) + 16 + (detail === 'full' ? bytes(json) : bytes(renderLine(item as AnnotationSummary)))
    wireCosts.set(item, cost)
  }
  return cost
}

function pageResult(page: Page<Annotation>, items: AnnotationItem[], fit: number): PageResult {
  const shown = fit === items.length ? items : items.slice(0, fit)
  const cutByBudget = fit < items.length
  const result: PageResult = { annotations: shown, count: shown.length, total: page.total }
  const last = page.items[fit - 1]
  if ((page.hasMore || cutByBudget) && last) result.nextCursor = cursorAfter(last)
  if (cutByBudget) result.truncated = 'byte_budget'
  return result
}
