/**
 * What an element looked like when it was annotated — tag, the start of its text, its naming
 * attributes and the text around it — and the check that an element found again is that one.
 * Selectors with positions (`li:nth-of-type(2)`) point at another element after a list is
 * re-ordered; the fingerprint notices, and the search below finds the right one or none.
 */
import { redactTextContent } from '../../early/redact.js'
import { LIMITS } from '../../../store/vocabulary.js'
import { clip, squash } from '../../shared/format.js'
import type { Fingerprint } from '../../shared/types.js'
import { isElement, type Root } from './dom.js'

/** Attributes put on an element to name it on purpose (test ids, form names, ARIA labels), in the order they are trusted; the selectors (describe.ts) try them first too. */
export const NAMED_BY = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-qa', 'name', 'aria-label'] as const
/** Attributes that name an element; those marked stable must be equal for a match. */
const ATTRIBUTES = ['id', ...NAMED_BY, 'href', 'role', 'type', 'title', 'alt', 'placeholder', 'for']
const STABLE = new Set<string>([...NAMED_BY, 'href', 'role', 'type', 'alt', 'for'])
/** At most this many elements of a tag are compared when the selector's element does not match. */
const SEARCH_LIMIT = 5_000
const MAX = LIMITS.fingerprintText

/** Generated ids (React useId, long numbers) say nothing about the element. */
function generatedId(id: string): boolean {
  return /^:|:$|\d{4,}/.test(id)
}

/** The element's text as the fingerprint keeps it: whitespace collapsed, cut to the limit. */
function textOf(el: Element): string {
  // Redacted: a masked subtree or a textarea's contents never enter the record.
  return clip(squash(redactTextContent(el)), MAX)
}

/** The text of the nearest ancestor (≤ 4 levels) that says more than the element: its row, card or label. */
function nearText(el: Element, own: string): string | undefined {
  let cur = el.parentElement
  for (let i = 0; cur && i < 4; cur = cur.parentElement, i++) {
    if (cur === cur.ownerDocument.body) break
    const t = textOf(cur)
    if (t !== own && t !== '') return t
  }
  return undefined
}

export function fingerprintOf(el: Element): Fingerprint {
  const fp: Fingerprint = { tag: el.localName }
  const text = textOf(el)
  if (text !== '') fp.text = text
  const attributes: Record<string, string> = {}
  let n = 0
  for (const name of ATTRIBUTES) {
    const v = el.getAttribute(name)
    if (v === null || v === '' || (name === 'id' && generatedId(v))) continue
    attributes[name] = clip(v, MAX)
    if (++n >= LIMITS.fingerprintAttributes) break
  }
  if (n > 0) fp.attributes = attributes
  const near = nearText(el, text)
  if (near !== undefined) fp.near = near
  return fp
}

/** Whether `fp` says anything that tells one element from another. */
function identifying(fp: Fingerprint): boolean {
  return fp.text !== undefined || fp.attributes !== undefined || fp.near !== undefined
}

/**
 * Whether `el` is the fingerprinted element: same tag, same text, same stable naming attributes;
 * with neither text nor attributes to go by, the same nearby text.
 */
function sameElement(el: Element, fp: Fingerprint): boolean {
  const text = textOf(el)
  if ((fp.text ?? '') !== text || !sameAttributes(el, fp)) return false
  if (fp.text === undefined && fp.attributes === undefined && fp.near !== undefined) return nearText(el, text) === fp.near
  return true
}

/** Same tag and the same stable naming attributes. */
function sameAttributes(el: Element, fp: Fingerprint): boolean {
  if (el.localName !== fp.tag) return false
  for (const [name, value] of Object.entries(fp.attributes ?? {})) {
    if (!STABLE.has(name) && name !== 'id') continue
    if (clip(el.getAttribute(name) ?? '', MAX) !== value) return false
  }
  return true
}

/**
 * A selector that names its element (an id or a naming attribute on the last part) with no
 * position in it: the element it finds is trusted even when its text changed (a live counter).
 */
function stableSelector(selector: string): boolean {
  const last = selector.split(' > ').pop() ?? ''
  return !selector.includes(':nth-of-type(') && /^[a-z0-9-]*[#[]/i.test(last)
}

export type Verdict = { element: Element; moved: boolean } | { element: null; moved: false }

/**
 * Find the fingerprinted element in `root`: the selector's element when it matches, else the one
 * element of the same tag that does (the nearby text decides between several). None, or several
 * that cannot be told apart: not found. Never a confident guess.
 */
export function locate(root: Root, selector: string, fp: Fingerprint | undefined): Verdict {
  let selected: Element | null
  try {
    selected = root.querySelector(selector)
  } catch {
    selected = null
  }
  if (!fp || !identifying(fp)) return selected ? { element: selected, moved: false } : { element: null, moved: false }
  if (selected && (sameElement(selected, fp) || (stableSelector(selector) && sameAttributes(selected, fp)))) return { element: selected, moved: false }
  let candidates: Element[]
  try {
    candidates = [...root.querySelectorAll(fp.tag)].slice(0, SEARCH_LIMIT).filter((c) => isElement(c) && sameElement(c, fp))
  } catch {
    return { element: null, moved: false }
  }
  if (candidates.length > 1 && fp.near !== undefined) candidates = candidates.filter((c) => nearText(c, textOf(c)) === fp.near)
  return candidates.length === 1 ? { element: candidates[0]!, moved: true } : { element: null, moved: false }
}
