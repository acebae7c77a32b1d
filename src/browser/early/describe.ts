/**
 * How a step names the element it is about (./steps.ts records, this describes): its role, tag,
 * accessible name and text (`identify`), and where it is — a CSS selector that finds it again,
 * its test id, the row or card it is in (`locate`). Called only when the steps are read or saved,
 * never during the person's event, so its DOM walks and selector checks cost the page nothing while
 * the person works. An element in a masked region (redact.ts) is named by its role, tag and
 * selector only.
 */
import { LIMITS } from '../../store/vocabulary.js'
import type { StepTarget } from '../shared/types.js'
import { isMasked, MASK_SELECTOR } from './redact.js'

const TEXT = 80

export const squash = (s: string | null | undefined, max = TEXT): string => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim()
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

const IMPLICIT: Record<string, string> = { FORM: 'form', BUTTON: 'button', A: 'link', TEXTAREA: 'textbox', SELECT: 'combobox', SUMMARY: 'button', OPTION: 'option', LI: 'listitem', IMG: 'img', H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading' }
const INPUT_ROLES: Record<string, string> = { checkbox: 'checkbox', radio: 'radio', range: 'slider', button: 'button', submit: 'button', reset: 'button', image: 'button', search: 'searchbox', number: 'spinbutton', email: 'textbox', tel: 'textbox', text: 'textbox', url: 'textbox' }
const NAMED_BY_CONTENT = new Set(['button', 'link', 'heading', 'checkbox', 'radio', 'option', 'tab', 'menuitem', 'listitem', 'cell', 'switch', 'treeitem'])
/** The row or card an element is in, to say which of many alike ("Add to cart" of the Chair). */
const CONTAINER = 'li,tr,article,[role=row],[role=listitem],[role=article],[role=gridcell]'

function roleOf(el: Element): string | undefined {
  const explicit = el.getAttribute('role')?.trim().split(/\s+/)[0]
  if (explicit) return explicit
  if (el.tagName === 'A') return el.hasAttribute('href') ? 'link' : undefined
  if (el.tagName === 'INPUT') {
    const type = (el as HTMLInputElement).type
    return type === 'password' || type === 'hidden' ? undefined : (INPUT_ROLES[type] ?? (/^(date|time|month|week|color|file)/.test(type) ? undefined : 'textbox'))
  }
  return IMPLICIT[el.tagName]
}

/** A label's own words: the text of the controls inside it (a select's options, a textarea's text) left out. */
function labelText(label: HTMLLabelElement): string {
  let out = ''
  const walker = label.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_TEXT)
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement?.closest('select,textarea,button,script,style')) out += n.textContent ?? ''
  return out
}

function nameOf(el: Element, role: string | undefined, content: string | undefined): string {
  const label = squash(el.getAttribute('aria-label'))
  if (label) return label
  const ids = el.getAttribute('aria-labelledby')
  if (ids) {
    const text = squash(ids.split(/\s+/).map((id) => el.ownerDocument.getElementById(id)?.textContent ?? '').join(' '))
    if (text) return text
  }
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
    const text = squash([...(el.labels ?? [])].map((l) => labelText(l)).join(' '))
    if (text) return text
    if (el instanceof HTMLInputElement && /^(submit|button|reset)$/.test(el.type) && el.value) return squash(el.value)
    const placeholder = squash(el.getAttribute('placeholder'))
    if (placeholder) return placeholder
  }
  if (el instanceof HTMLImageElement && el.alt) return squash(el.alt)
  if (role && NAMED_BY_CONTENT.has(role)) {
    const text = squash(content ?? el.textContent)
    if (text) return text
  }
  return squash(el.getAttribute('title'))
}

const cssEscape = (s: string): string => (typeof CSS !== 'undefined' && CSS.escape ? CSS.escape(s) : s.replace(/[^\w-]/g, '\\$&'))

/** A CSS selector that finds `el` again: an id, a test id or a name when one is unique, else a short nth-of-type path up to one. */
function selectorOf(el: Element): string {
  const doc = el.ownerDocument
  const unique = (sel: string): boolean => {
    try {
      return doc.querySelectorAll(sel).length === 1
    } catch {
      return false
    }
  }
  const own = (e: Element): string | undefined => {
    const tag = e.tagName.toLowerCase()
    if (e.id && !/\d{3,}|^[:_]|[:]/.test(e.id) && unique(`#${cssEscape(e.id)}`)) return `#${cssEscape(e.id)}`
    const testId = e.getAttribute('data-testid')
    if (testId && unique(`[data-testid="${cssEscape(testId)}"]`)) return `[data-testid="${cssEscape(testId)}"]`
    const name = e.getAttribute('name')
    if (name && unique(`${tag}[name="${cssEscape(name)}"]`)) return `${tag}[name="${cssEscape(name)}"]`
    return undefined
  }
  const parts: string[] = []
  let e: Element | null = el
  for (let depth = 0; e && depth < 6; depth++) {
    const found = own(e)
    if (found) {
      parts.unshift(found)
      return parts.join(' > ')
    }
    const tag = e.tagName.toLowerCase()
    const parent: Element | null = e.parentElement
    if (!parent) {
      parts.unshift(tag)
      break
    }
    const same = [...parent.children].filter((c) => c.tagName === e!.tagName)
    parts.unshift(same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(e) + 1})` : tag)
    e = parent
  }
  return parts.join(' > ')
}

/** The first text of the row or card `el` is in (a heading when it has one), masked parts left out. */
function nearOf(el: Element, own: string | undefined): string | undefined {
  const box = el.parentElement?.closest(CONTAINER)
  if (!box) return undefined
  const heading = box.querySelector('h1,h2,h3,h4,h5,h6,[role=heading]')
  if (heading && !heading.contains(el) && !isMasked(heading)) {
    const t = squash(heading.textContent, 60)
    if (t) return t
  }
  const walker = el.ownerDocument.createTreeWalker(box, NodeFilter.SHOW_TEXT)
  for (let n = walker.nextNode(), i = 0; n && i < 20; n = walker.nextNode(), i++) {
    const parent = n.parentElement
    if (!parent || el.contains(parent) || isMasked(parent) || parent.closest('script,style,button,input,select,textarea')) continue
    const t = squash(n.textContent, 60)
    if (t && t !== own) return t
  }
  return undefined
}

/**
 * How a step names its element: role, tag, accessible name and text; `content`, its words when the
 * person acted (a button's words may change once pressed), squashed here. In a masked region: role and tag only;
 * a form or an element holding a masked part has no text.
 */
export function identify(el: Element, content: string | undefined): StepTarget {
  const role = roleOf(el)
  const out: StepTarget = { tag: el.tagName.toLowerCase() }
  if (role) out.role = role
  if (isMasked(el)) return out
  const name = nameOf(el, role, content)
  if (name) out.name = name
  const isField = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement
  if (!isField && role !== 'form' && !el.querySelector(MASK_SELECTOR)) {
    const text = squash(content ?? el.textContent)
    if (text && text !== name) out.text = text
  }
  return out
}

/**
 * Where a step's element is, added only when the steps are read or saved (the costly part, never
 * on the person's click): a CSS selector, its test id, the row it is in. An element the page has
 * since removed is located in the part of the page it was removed with.
 */
export function locate(el: Element, target: StepTarget): void {
  target.selector = selectorOf(el).slice(0, LIMITS.selector)
  if (isMasked(el)) return
  const testId = el.getAttribute('data-testid')
  if (testId) target.testId = squash(testId)
  const near = nearOf(el, target.name)
  if (near) target.near = near
}
