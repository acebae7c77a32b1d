/**
 * Selected words anchored like a W3C Web Annotation text-quote selector: the exact words, a little
 * context before and after, and their offsets in the element's text. Found again by offsets when
 * the words are still there, else by the occurrence whose context matches best.
 */
import { LIMITS } from '../../../store/vocabulary.js'
import type { TextQuote } from '../../shared/types.js'

const CONTEXT = 32

/** The quote of `range`, relative to `el`'s text. */
export function quoteOf(range: Range, el: Element): TextQuote | undefined {
  const all = el.textContent ?? ''
  const before = el.ownerDocument.createRange()
  try {
    before.setStart(el, 0)
    before.setEnd(range.startContainer, range.startOffset)
  } catch {
    return undefined
  }
  const start = before.toString().length
  const exact = range.toString()
  if (exact.trim() === '' || exact.length > LIMITS.selectedText) return undefined
  const end = start + exact.length
  const quote: TextQuote = { exact, start, end }
  const prefix = all.slice(Math.max(0, start - CONTEXT), start)
  const suffix = all.slice(end, end + CONTEXT)
  if (prefix) quote.prefix = prefix
  if (suffix) quote.suffix = suffix
  return quote
}

/** How much of the context around offset `start` agrees with the quote's. */
function contextScore(all: string, start: number, q: TextQuote): number {
  let score = 0
  const prefix = q.prefix ?? ''
  for (let i = 1; i <= prefix.length && all[start - i] === prefix[prefix.length - i]; i++) score++
  const suffix = q.suffix ?? ''
  const end = start + q.exact.length
  for (let i = 0; i < suffix.length && all[end + i] === suffix[i]; i++) score++
  return score
}

/** The range of the quoted words in `el` now, or null when they are gone. */
export function rangeOf(el: Element, q: TextQuote): Range | null {
  const all = el.textContent ?? ''
  let start = -1
  if (q.start !== undefined && all.slice(q.start, q.start + q.exact.length) === q.exact) start = q.start
  else {
    let best = -1
    for (let i = all.indexOf(q.exact); i >= 0; i = all.indexOf(q.exact, i + 1)) {
      const score = contextScore(all, i, q)
      if (score > best) {
        best = score
        start = i
      }
    }
  }
  if (start < 0) return null
  return rangeAt(el, start, start + q.exact.length)
}

/** A range over characters [start, end) of `el`'s text. */
function rangeAt(el: Element, start: number, end: number): Range | null {
  const doc = el.ownerDocument
  const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT)
  const range = doc.createRange()
  let offset = 0
  let begun = false
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = (node as Text).data.length
    if (!begun && start <= offset + length) {
      range.setStart(node, start - offset)
      begun = true
    }
    if (begun && end <= offset + length) {
      range.setEnd(node, end - offset)
      return range
    }
    offset += length
  }
  return null
}
