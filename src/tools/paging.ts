/**
 * The list tools' side of paging: their paging arguments, the query they run, and the text part
 * of a page. The page itself (shape, limits, byte budget) is in views/page.ts.
 */
import { z } from 'zod'
import type { AnnotationStatus } from '../store/model.js'
import { decodeCursor } from '../store/cursor.js'
import type { Store } from '../store/store.js'
import { Cursor, DEFAULT_PAGE_LIMIT, fitPage, Limit, type PageResult } from '../views/page.js'
import { Detail, renderItemsWithJson } from '../views/summary.js'
import { jsonBody, joinLines } from '../views/json.js'
import type { ToolContext } from './define.js'

/** `detail` as a tool lists it: the enum says it all (summaries are the default, as the descriptions say). */
export const DetailParam = z.enum(Detail.options)

export const pagingInput = { detail: DetailParam.optional(), limit: Limit.optional(), cursor: Cursor.optional() }

type ListArgs = z.output<z.ZodObject<typeof pagingInput>>

/** Run a paged annotation query for a list tool. */
export function listPage(store: Store, query: { sessionId?: string | undefined; status?: AnnotationStatus | undefined }, args: ListArgs, ctx: ToolContext): PageResult & { rev: number } {
  const page = store.pageAnnotations(query, { after: decodeCursor(args.cursor), limit: args.limit ?? DEFAULT_PAGE_LIMIT })
  // The store rev this page reflects: watch_changes / get_changes continue from it.
  return { ...fitPage(page, args.detail ?? 'summary', ctx.limits.byteBudget), rev: store.rev }
}

/** The store rev, for list and watch results: where get_changes / watch_changes continue. */
export const RevOut = z.number().int().describe('Store rev of this answer: pass it as sinceRev to watch_changes')

/** Whether a page holds full records (the text part is then the JSON itself). */
export function detailOf(r: { annotations?: readonly object[] | undefined }): Detail {
  const first = r.annotations?.[0]
  return first && !('replyCount' in first) ? 'full' : 'summary'
}

/**
 * The text part of a page. Summaries: a header line, one line per annotation, and how to
 * continue. Full records: the same JSON as the structured content.
 */
export function renderPage(result: PageResult, header: string, detail: Detail = 'summary', more: (cursor: string) => string = (c) => `call again with cursor "${c}"`): string {
  if (detail === 'full') return JSON.stringify(result)
  const items = renderItemsWithJson(result.annotations)
  const lines = [header, ...items.lines]
  const bodies = [jsonBody(header), ...items.bodies]
  const tail: string[] = []
  if (result.truncated) tail.push('(page cut short to stay under the response size budget)')
  if (result.nextCursor) tail.push(`More: ${more(result.nextCursor)}.`)
  for (const line of tail) {
    lines.push(line)
    bodies.push(jsonBody(line))
  }
  // Joined with its JSON remembered: the stdio server sends the text without escaping it again.
  return joinLines(lines, bodies)
}

export function pageHeader(what: string, result: { count: number; total: number; rev?: number | undefined }): string {
  const rev = result.rev === undefined ? '' : ` (rev ${result.rev})`
  return result.total === 0 ? `No ${what}${rev}.` : `${what[0]!.toUpperCase()}${what.slice(1)}: ${result.count} of ${result.total}, oldest first${rev}.`
}
