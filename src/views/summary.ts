/**
 * What a client sees of an annotation by default: enough to decide and act, in few bytes, as a
 * record and as one line of text. The MCP tools and resources list these; `get_annotation` (or
 * `detail: "full"`) gives the whole record.
 */
import { z } from 'zod'
import { sourceHint } from '../store/source-location.js'
import { jsonBody } from './json.js'
import { Annotation, AnnotationStatus, Author, Id, Intent, REPLY_KINDS, Severity, Timestamp, type Annotation as AnnotationT } from '../store/model.js'

const SNIPPET_CHARS = 120
const LAST_REPLY_CHARS = 280
/** Longer comments, URLs and selectors are clipped in summaries (with "…"); get_annotation has them whole. */
const SUMMARY_COMMENT_CHARS = 1_000
const SUMMARY_URL_CHARS = 300
const SUMMARY_SELECTOR_CHARS = 300

export const AnnotationSummary = z.object({
  id: Id,
  sessionId: Id,
  status: AnnotationStatus,
  comment: z.string().describe(`What the person wants (clipped to ${SUMMARY_COMMENT_CHARS} characters in a summary)`),
  clipped: z.literal(true).optional().describe('Some field was clipped: get_annotation has the whole record'),
  url: z.string().optional(),
  selector: z.string().optional().describe('CSS selector of the annotated element; inside shadow roots and iframes the composed path `host >>> inner`'),
  label: z.string().optional().describe("The element as a person names it, e.g. button 'Delete'"),
  elements: z.number().int().optional().describe('How many more elements it is about (Shift-click, a dragged area): get_annotation lists them'),
  area: z.string().optional().describe('A dragged area: x,y widthxheight in page pixels'),
  text: z.string().optional().describe(`Start of the element text (≤ ${SNIPPET_CHARS} characters)`),
  source: z.string().optional().describe('Where the element is written: file:line (and the call site of a shared UI component); open it first'),
  intent: Intent.optional(),
  severity: Severity.optional(),
  createdAt: Timestamp,
  rev: z.number().int(),
  replyCount: z.number().int(),
  images: z.number().int().optional().describe('How many images (screenshot, pasted images) it and its replies have: get_annotation shows them'),
  lastReply: z
    .object({
      author: Author,
      message: z.string().describe(`The reply (≤ ${LAST_REPLY_CHARS} characters; see get_annotation for all of it)`),
      kind: z.enum(REPLY_KINDS).optional(),
      createdAt: Timestamp,
    })
    .optional(),
})
export type AnnotationSummary = z.infer<typeof AnnotationSummary>

/** A list item: a summary, or the full record when `detail: "full"` was asked for. */
export const AnnotationItem = z.union([AnnotationSummary, Annotation])
export type AnnotationItem = z.infer<typeof AnnotationItem>

export const Detail = z.enum(['summary', 'full']).describe('Default "summary"')
export type Detail = z.infer<typeof Detail>

/** The element's selector, prefixed by the shadow hosts and iframes on the way to it: `x-card >>> button.delete`. */
function composedSelector(element: { selector: string; scopes?: string[] | undefined }): string {
  return element.scopes && element.scopes.length > 0 ? [...element.scopes, element.selector].join(' >>> ') : element.selector
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/**
 * Summaries of immutable records (a change makes a new record object), kept while the record
 * lives: an agent reads the same pending annotations again and again.
 */
const summaries = new WeakMap<AnnotationT, AnnotationSummary>()

export function toSummary(a: AnnotationT): AnnotationSummary {
  let s = summaries.get(a)
  if (!s) summaries.set(a, (s = freezeSummary(summarize(a))))
  return s
}

/** Shared between calls, so immutable, like the records they summarise. */
function freezeSummary(s: AnnotationSummary): AnnotationSummary {
  if (s.lastReply) Object.freeze(s.lastReply)
  return Object.freeze(s)
}

function summarize(a: AnnotationT): AnnotationSummary {
  const s: AnnotationSummary = { id: a.id, sessionId: a.sessionId, status: a.status, comment: clip(a.comment, SUMMARY_COMMENT_CHARS), createdAt: a.createdAt, rev: a.rev, replyCount: a.replies.length }
  if (a.url !== undefined) s.url = clip(a.url, SUMMARY_URL_CHARS)
  const selector = a.element ? composedSelector(a.element) : undefined
  if (selector !== undefined) s.selector = clip(selector, SUMMARY_SELECTOR_CHARS)
  if (a.element?.label !== undefined) s.label = clip(a.element.label, SNIPPET_CHARS)
  if (a.elements !== undefined && a.elements.length > 0) s.elements = a.elements.length
  if (a.area !== undefined) s.area = `${Math.round(a.area.x)},${Math.round(a.area.y)} ${Math.round(a.area.width)}x${Math.round(a.area.height)}`
  if (a.comment.length > SUMMARY_COMMENT_CHARS || (a.url?.length ?? 0) > SUMMARY_URL_CHARS || (selector?.length ?? 0) > SUMMARY_SELECTOR_CHARS) s.clipped = true
  const text = a.element?.text ?? a.selectedText
  if (text !== undefined) {
    const t = text.trim()
    if (t !== '') s.text = clip(/\s\s|[\n\t\r]/.test(t) ? t.replace(/\s+/g, ' ') : t, SNIPPET_CHARS)
  }
  const source = a.source ? sourceHint(a.source) : undefined
  if (source !== undefined) s.source = clip(source, SUMMARY_SELECTOR_CHARS)
  if (a.intent !== undefined) s.intent = a.intent
  if (a.severity !== undefined) s.severity = a.severity
  const images = (a.attachments?.length ?? 0) + a.replies.reduce((n, r) => n + (r.attachments?.length ?? 0), 0)
  if (images > 0) s.images = images
  const last = a.replies.at(-1)
  if (last) {
    s.lastReply = { author: last.author, message: clip(last.message, LAST_REPLY_CHARS), createdAt: last.createdAt }
    if (last.kind !== undefined) s.lastReply.kind = last.kind
  }
  return s
}

export function itemOf(a: AnnotationT, detail: Detail): AnnotationItem {
  return detail === 'full' ? a : toSummary(a)
}

const oneLine = (s: string) => (s.includes('\n') ? s.replace(/\s*\n\s*/g, ' ⏎ ') : s)

/** Rendered lines, kept per summary object so a page is rendered once while it is sized and once sent. */
const lineCache = new WeakMap<object, string>()

/** The line naming a summary's session and page, printed whenever it changes. */
export function groupLine(s: AnnotationSummary): string {
  let line = groupCache.get(s)
  if (line === undefined) groupCache.set(s, (line = `session ${s.sessionId}${s.url ? ` at ${s.url}` : ''}`))
  return line
}

/** Group lines, kept per summary object like its rendered line: a page asks for each one twice (sizing, then rendering). */
const groupCache = new WeakMap<object, string>()

/** One annotation as one line. */
export function renderLine(s: AnnotationSummary): string {
  let line = lineCache.get(s)
  if (line !== undefined) return line
  const tags = s.intent ? (s.severity ? `${s.intent}/${s.severity}` : s.intent) : (s.severity ?? '')
  const selector = s.selector ? `\`${oneLine(s.selector)}\`` : ''
  const text = s.label ? oneLine(s.label) : s.text ? `"${oneLine(s.text)}"` : ''
  const more = (s.elements ? ` +${s.elements} element${s.elements === 1 ? '' : 's'}` : '') + (s.area ? ` area ${s.area}` : '')
  const where = (selector && text ? `${selector} ${text}` : selector || text) + more + (s.source ? `${selector || text || more ? ' ' : ''}in ${oneLine(s.source)}` : '')
  const replies = s.lastReply ? ` | ${s.replyCount} repl${s.replyCount === 1 ? 'y' : 'ies'}, last ${s.lastReply.author}${s.lastReply.kind === 'question' ? ' (question)' : ''}: "${oneLine(s.lastReply.message)}"` : ''
  line = `- ${s.id} [${s.status}${tags ? ` ${tags}` : ''}] rev ${s.rev} ${s.createdAt}${where ? ` at ${where}` : ''}: ${oneLine(s.comment)}${replies}`
  lineCache.set(s, line)
  return line
}

/**
 * One line per annotation, grouped under a line naming the session and page whenever those
 * change: the same information as the JSON in about half the tokens. The lines' own punctuation
 * is ASCII, and the two non-Latin-1 marks (⏎ for a newline, … for a clip) appear only where a
 * field needs them: one non-Latin-1 character makes the whole response a two-byte string for V8
 * to serialise and encode (measured: a third of the time spent writing a page).
 */
export function renderItems(items: readonly AnnotationItem[]): string[] {
  return renderItemsWithJson(items).lines
}

/** Each line's JSON body (the line as it stands escaped inside a JSON string), kept like the line. */
const bodyCache = new WeakMap<object, string>()

function lineBody(s: AnnotationSummary): string {
  let body = bodyCache.get(s)
  if (body === undefined) bodyCache.set(s, (body = jsonBody(renderLine(s))))
  return body
}

/**
 * The lines of `renderItems`, and beside each its JSON body: a page's text part is sent as JSON,
 * and the kept bodies spare escaping every line again for every page (views/json.ts).
 */
export function renderItemsWithJson(items: readonly AnnotationItem[]): { lines: string[]; bodies: string[] } {
  const lines: string[] = []
  const bodies: string[] = []
  let group = ''
  for (const item of items) {
    const s = 'replyCount' in item ? item : toSummary(item)
    const header = groupLine(s)
    if (header !== group) {
      lines.push(header)
      bodies.push(jsonBody(header))
      group = header
    }
    lines.push(renderLine(s))
    bodies.push(lineBody(s))
  }
  return { lines, bodies }
}
