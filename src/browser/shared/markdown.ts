/**
 * Annotations as compact Markdown an agent or a ticket can take ("Copy as Markdown"):
 * per annotation the element as a person names it (and its selector), the page, the source
 * location when known, the comment, intent / severity / status, the steps to reproduce and the thread. Pure and zod-free
 * (type imports only), shared by the overlay and the inbox. Lists come out oldest first, ties by id.
 *
 * Stable API: `annotationToMarkdown`, `annotationsToMarkdown`, `elementName`, `sourceText`,
 * `byOldest`, `MarkdownOptions`.
 */
import type { Annotation, ElementInfo, Reply } from './types.js'
import type { SourceLocation } from '../../store/source-location.js'
import { byCreation, webUrl } from './format.js'
import { stepLines } from '../../store/steps.js'

export interface MarkdownOptions {
  /** A heading line above a list (e.g. "Annotations on localhost:5173/todos"); none when absent. */
  title?: string
  /** Heading level of each annotation (default 3: `###`; a list title gets one level less). */
  level?: 1 | 2 | 3 | 4 | 5 | 6
  /** Number the annotations 1., 2., … in their heading (default true for lists, false for one). */
  numbered?: boolean
  /** Include the annotation id (default true: an agent can act on it). */
  ids?: boolean
  /** Include the thread (default true). */
  thread?: boolean
}

/** How far a name's quoted text and a heading's comment run before they are cut. */
const NAME_CHARS = 60
const HEADING_CHARS = 80

/** Roles and tags in a person's words. */
const ROLE_WORDS: Record<string, string> = {
  a: 'link',
  link: 'link',
  button: 'button',
  li: 'list item',
  listitem: 'list item',
  ul: 'list',
  ol: 'list',
  list: 'list',
  img: 'image',
  image: 'image',
  svg: 'icon',
  input: 'input',
  textbox: 'text box',
  textarea: 'text box',
  select: 'dropdown',
  combobox: 'dropdown',
  checkbox: 'checkbox',
  radio: 'radio button',
  h1: 'heading',
  h2: 'heading',
  h3: 'heading',
  h4: 'heading',
  h5: 'heading',
  h6: 'heading',
  heading: 'heading',
  p: 'paragraph',
  paragraph: 'paragraph',
  nav: 'navigation',
  navigation: 'navigation',
  table: 'table',
  tr: 'table row',
  row: 'table row',
  td: 'table cell',
  th: 'column header',
  cell: 'table cell',
  dialog: 'dialog',
  form: 'form',
  label: 'label',
  header: 'header',
  banner: 'header',
  footer: 'footer',
  contentinfo: 'footer',
  main: 'main content',
  section: 'section',
  article: 'article',
  tab: 'tab',
  menuitem: 'menu item',
  option: 'option',
  span: 'text',
  div: 'box',
}

/** Whitespace runs collapsed, cut to `max` characters with "…" (never splitting a surrogate pair). */
function short(text: string, max: number): string {
  const s = text.replace(/\s+/g, ' ').trim()
  if (s.length <= max) return s
  let end = max - 1
  const code = s.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return s.slice(0, end) + '…'
}

/** Inline code that survives backticks inside (CommonMark: a longer fence, padded). */
function code(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim()
  const runs = s.match(/`+/g) ?? []
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1)
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${s}${pad}${fence}`
}

/** Text that reads literally inside a Markdown line (no accidental emphasis, links or headings). */
function plain(text: string): string {
  return text.replace(/([\\`*[\]<>])/g, '\\$1')
}

/**
 * The element as a person names it: `button "Delete"`, `list item "Refund approved for order #4790"`,
 * `heading "Settings"`; the tag or the selector when there is nothing better.
 */
export function elementName(el: ElementInfo): string {
  const tag = el.tag?.toLowerCase()
  const kind = (el.role !== undefined ? ROLE_WORDS[el.role.toLowerCase()] ?? el.role : undefined) ?? (tag !== undefined ? ROLE_WORDS[tag] ?? tag : undefined)
  const label = el.accessibleName?.trim() || el.text?.trim() || ''
  if (kind !== undefined && label !== '') return `${kind} "${short(label, NAME_CHARS)}"`
  if (kind !== undefined) return kind
  if (label !== '') return `"${short(label, NAME_CHARS)}"`
  return el.selector
}

const at = (file: string, line?: number, column?: number) => (line !== undefined ? `${file}:${line}${column !== undefined ? `:${column}` : ''}` : file)

/**
 * Where the element is written: `src/App.tsx:42 in <TodoItem> (used at src/pages/List.tsx:10)`,
 * "(approximate)" when it is a best guess; undefined when the source is unknown.
 */
export function sourceText(s: SourceLocation | undefined): string | undefined {
  if (!s || (s.file === undefined && s.component === undefined)) return undefined
  const parts: string[] = []
  if (s.file !== undefined) parts.push(at(s.file, s.line, s.column))
  if (s.component !== undefined) parts.push(s.file !== undefined ? `in <${s.component}>` : `<${s.component}>`)
  if (s.file !== undefined && s.exact === false) parts.push('(approximate)')
  if (s.callSite) parts.push(`(used at ${at(s.callSite.file, s.callSite.line, s.callSite.column)})`)
  return parts.join(' ')
}

/** Oldest first, ties by id: the order every list comes out in (the pins' numbering too). */
export { byCreation as byOldest } from './format.js'

/** Raw HTML in someone's text shown as text: a renderer that allows HTML gets no tags from it. */
function noHtml(text: string): string {
  return text.replace(/[<>]/g, '\\$&')
}

/**
 * Someone's multi-line text as a blockquote (every line quoted, blank lines kept, no raw HTML),
 * each line prefixed with `indent`: what they wrote stays inside their quote, so no line of it
 * can read as another message of the thread.
 */
function quote(text: string, indent = ''): string {
  return noHtml(text)
    .replace(/\r\n?/g, '\n')
    .trim()
    .split('\n')
    .map((line) => (line.trim() === '' ? `${indent}>` : `${indent}> ${line}`))
    .join('\n')
}

function who(r: Reply): string {
  const name = r.author === 'human' ? 'Human' : 'Agent'
  return r.kind === 'question' ? `${name} (question)` : name
}

/** One thread message as a list item: who wrote it, then their words quoted inside the item. */
function threadItem(r: Reply): string {
  const images = r.attachments?.length ? ` [${r.attachments.length} image${r.attachments.length === 1 ? '' : 's'}]` : ''
  return `- **${who(r)}:**${images}\n${quote(r.message, '  ')}`
}

function heading(a: Annotation, level: number, n: number | undefined): string {
  const firstLine = a.comment.trim().split(/\r?\n/)[0] ?? ''
  const title = plain(short(firstLine, HEADING_CHARS)) || '(no comment)'
  return `${'#'.repeat(level)} ${n !== undefined ? `${n}. ` : ''}${title}`
}

function render(a: Annotation, opts: MarkdownOptions, level: number, n: number | undefined): string {
  const out: string[] = [heading(a, level, n), '']
  const facts: string[] = []
  const meta = [`**Status:** ${a.status}`]
  if (a.intent) meta.push(`**Intent:** ${a.intent}`)
  if (a.severity) meta.push(`**Severity:** ${a.severity}`)
  facts.push(`- ${meta.join(' · ')}`)
  if (a.element) {
    const name = elementName(a.element)
    facts.push(`- **Element:** ${name === a.element.selector ? code(a.element.selector) : `${plain(name)} — ${code(a.element.selector)}`}`)
  }
  if (a.url) facts.push(`- **Page:** ${webUrl(a.url) ?? code(a.url)}`)
  const src = sourceText(a.source)
  if (src !== undefined) facts.push(`- **Source:** ${code(src)}`)
  if (a.selectedText?.trim()) facts.push(`- **Selected text:** "${plain(short(a.selectedText, 300))}"`)
  const images = a.attachments?.length ?? 0
  if (images > 0) facts.push(`- **Images:** ${images}`)
  if (opts.ids !== false) facts.push(`- **Id:** ${code(a.id)} · created ${a.createdAt}${a.resolvedAt ? ` · ${a.status} ${a.resolvedAt}` : ''}`)
  out.push(...facts, '', quote(a.comment))
  // The steps as numbered lines, each in code: the page's words stay text, never Markdown.
  if (a.steps?.length) out.push('', '**Steps to reproduce:**', '', ...stepLines(a.steps).map((line) => line.replace(/^(\d+\.) (.*)$/, (_m, n: string, rest: string) => `${n} ${code(rest)}`)))
  if (opts.thread !== false && a.replies.length > 0) out.push('', '**Thread:**', '', ...a.replies.map(threadItem))
  return out.join('\n')
}

/** One annotation as Markdown (ends without a trailing newline). */
export function annotationToMarkdown(a: Annotation, opts: MarkdownOptions = {}): string {
  return render(a, opts, opts.level ?? 3, opts.numbered === true ? 1 : undefined)
}

/**
 * A list of annotations (all of a page's, or a selection) as Markdown: an optional title, then
 * each annotation, oldest first (ties by id), numbered. Ends with one newline; empty list → the
 * title (if any) and "No annotations.".
 */
export function annotationsToMarkdown(list: readonly Annotation[], opts: MarkdownOptions = {}): string {
  const level = opts.level ?? 3
  const sorted = [...list].sort(byCreation)
  const parts: string[] = []
  if (opts.title !== undefined) parts.push(`${'#'.repeat(Math.max(1, level - 1))} ${plain(short(opts.title, 200))}`)
  if (sorted.length === 0) parts.push('No annotations.')
  const numbered = opts.numbered !== false
  sorted.forEach((a, i) => parts.push(render(a, opts, level, numbered ? i + 1 : undefined)))
  return parts.join('\n\n') + '\n'
}
