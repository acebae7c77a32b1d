/**
 * What the overlay tells the agent about an element: a CSS selector that matches it and nothing
 * else in its document or shadow root (checked with `querySelectorAll`), the shadow hosts and
 * iframes on the way to it, a fingerprint to recognise it again, a person's name for it, its DOM
 * path, tag, a short text snippet, a trimmed outerHTML and its bounding rect — each cut to the
 * store's limits.
 */
import { clip, squash } from '../../shared/format.js'
import { LIMITS } from '../../../store/vocabulary.js'
import type { ElementInfo } from '../../shared/types.js'
import { hostOf, viewRect, type Root } from './dom.js'
import { NAMED_BY, fingerprintOf } from './fingerprint.js'
import { humanName } from './names.js'
import { MASKED, isSensitiveElement, redactText, redactedClone } from '../../early/redact.js'

/** How much of an element's text the overlay sends as its snippet. */
const SNIPPET_CHARS = 200

/** Attributes that name an element on purpose, tried in this order before structure. */
const NAMING_ATTRIBUTES = [...NAMED_BY, 'title', 'alt', 'for', 'href', 'placeholder'] as const

/** Ids and classes that are generated (React useId, CSS modules, styled-components …) change between builds. */
function looksGenerated(token: string): boolean {
  return (
    /^:|:$/.test(token) || // React useId (:r1:)
    /\d{4,}/.test(token) || // long numbers
    /^(css|sc|jsx|svelte|emotion|styled)-[a-z0-9]+$/i.test(token) ||
    /^_?[a-zA-Z]+_[a-zA-Z0-9]{5,}$/.test(token) || // CSS modules: name_hash
    /^_?[a-zA-Z][\w-]*_[a-zA-Z0-9]{5,}_\d+$/.test(token) || // Vite's CSS modules in dev: _name_hash_line
    /^[a-zA-Z][\w-]*__(?=[\w-]*\d|[a-z\d_-]*[A-Z])[\w-]{5,}$/.test(token) || // css-loader, Next.js: File_name__hash (not BEM's block__element)
    /^[a-z0-9]{6,}$/i.test(token) && /\d/.test(token) && /[a-z]/i.test(token) // a bare hash
  )
}

function escape(value: string): string {
  return CSS.escape(value)
}

function matchesOnly(selector: string, el: Element, root: ParentNode): boolean {
  try {
    const found = root.querySelectorAll(selector)
    return found.length === 1 && found[0] === el
  } catch {
    return false
  }
}

/** The element's own part of a selector: tag, up to two stable classes, and its position among same-tag siblings when needed. */
function segment(el: Element): string {
  const tag = escape(el.localName)
  const classes = [...el.classList].filter((c) => c.length > 0 && c.length <= 40 && !looksGenerated(c) && !c.startsWith('marginalia')).slice(0, 2)
  let part = tag + classes.map((c) => `.${escape(c)}`).join('')
  const parent = el.parentElement
  if (parent) {
    const same = [...parent.children].filter((s) => s.localName === el.localName)
    const rivals = classes.length === 0 ? same : same.filter((s) => classes.every((c) => s.classList.contains(c)))
    if (rivals.length > 1) part += `:nth-of-type(${same.indexOf(el) + 1})`
  }
  return part
}

function idSelector(el: Element, root: ParentNode): string | undefined {
  const id = el.id
  if (!id || looksGenerated(id)) return undefined
  const selector = `#${escape(id)}`
  return matchesOnly(selector, el, root) ? selector : undefined
}

function attributeSelector(el: Element, root: ParentNode): string | undefined {
  for (const name of NAMING_ATTRIBUTES) {
    const value = el.getAttribute(name)
    if (value === null || value === '' || value.length > 200) continue
    const selector = `${escape(el.localName)}[${name}="${value.replace(/["\\]/g, '\\$&')}"]`
    if (matchesOnly(selector, el, root)) return selector
  }
  return undefined
}

/** The document or shadow root `el` is in (its own document when detached). */
function rootOf(el: Element): Root {
  const root = el.getRootNode()
  return root.nodeType === 9 || root.nodeType === 11 ? (root as Root) : el.ownerDocument
}

/**
 * A short CSS selector that matches `el` and nothing else in its document (or shadow root): a
 * unique id, a unique naming attribute (data-testid, name, aria-label …), or a child-combinator
 * chain up to the nearest ancestor with a unique id or naming attribute (or the root),
 * disambiguated with `:nth-of-type` only where nothing stabler tells siblings apart.
 *
 * @public test/browser/describe.test.ts bundles this module and calls it on `window.MarginaliaDescribe`.
 */
export function uniqueSelector(el: Element): string {
  const doc = rootOf(el)
  const direct = idSelector(el, doc) ?? attributeSelector(el, doc)
  if (direct) return direct
  const parts: string[] = []
  for (let cur: Element | null = el; cur; cur = cur.parentElement) {
    if (cur !== el) {
      const anchor = idSelector(cur, doc) ?? attributeSelector(cur, doc)
      if (anchor) {
        const selector = [anchor, ...parts].join(' > ')
        if (matchesOnly(selector, el, doc)) return selector
      }
    }
    parts.unshift(segment(cur))
    const selector = parts.join(' > ')
    if (matchesOnly(selector, el, doc)) return selector
  }
  // Every segment is unique among its siblings, so the chain from the root is unique.
  return parts.join(' > ')
}

/**
 * `html > body > main#app > section.hero > h1` — every ancestor, for humans and agents.
 *
 * @public test/browser/describe.test.ts bundles this module and calls it on `window.MarginaliaDescribe`.
 */
export function domPath(el: Element): string {
  const parts: string[] = []
  for (let cur: Element | null = el; cur; cur = cur.parentElement) {
    let part = cur.localName
    if (cur.id) part += `#${cur.id}`
    else {
      const cls = [...cur.classList].find((c) => !c.startsWith('marginalia'))
      if (cls) part += `.${cls}`
    }
    parts.unshift(part)
  }
  const path = parts.join(' > ')
  // Keep the element end of a very long path.
  return path.length <= LIMITS.path ? path : '… ' + path.slice(path.length - (LIMITS.path - 2))
}

/**
 * The element's visible text (or its accessible name), whitespace collapsed, at most `SNIPPET_CHARS`.
 *
 * @public test/browser/describe.test.ts bundles this module and calls it on `window.MarginaliaDescribe`.
 */
export function textSnippet(el: Element): string {
  // Redacted (early/redact.ts): masked subtrees, typed values and textareas never leave the page.
  const text = squash(redactText(el)) || squash(el.getAttribute('aria-label') ?? el.getAttribute('alt') ?? el.getAttribute('placeholder') ?? el.getAttribute('title') ?? '')
  return clip(text, SNIPPET_CHARS)
}

/**
 * outerHTML, whitespace collapsed, at most `max` characters: when longer, the opening tag, as
 * much of the inside as fits, a marker, and the closing tag.
 *
 * @public test/browser/describe.test.ts bundles this module and calls it on `window.MarginaliaDescribe`.
 */
export function trimmedHtml(el: Element, max: number = LIMITS.html): string {
  const html = el.outerHTML.replace(/\s+/g, ' ')
  if (html.length <= max) return html
  const close = `</${el.localName}>`
  const inner = el.innerHTML.replace(/\s+/g, ' ')
  const open = html.endsWith(close) ? html.slice(0, html.length - close.length - inner.length) : ''
  const marker = '<!-- … trimmed -->'
  if (open !== '' && open.length + marker.length + close.length < max) {
    const room = max - open.length - marker.length - close.length
    return open + inner.slice(0, room) + marker + close
  }
  return clip(html, max)
}

/**
 * A selector within the store's limit: a chain too long keeps its element end (still valid CSS, maybe less precise).
 *
 * @public test/browser/describe.test.ts bundles this module and calls it on `window.MarginaliaDescribe`.
 */
export function fitSelector(selector: string, max: number = LIMITS.selector): string {
  if (selector.length <= max) return selector
  const parts = selector.split(' > ')
  while (parts.length > 1 && parts.join(' > ').length > max) parts.shift()
  const fitted = parts.join(' > ')
  return fitted.length <= max ? fitted : fitted.slice(0, max)
}

function round(n: number): number {
  return Math.round(n * 10) / 10
}

/** Selectors of the shadow hosts and same-origin iframes on the way to `el`, outermost first. */
function scopesOf(el: Element): string[] {
  const scopes: string[] = []
  for (let host = hostOf(el); host && scopes.length < LIMITS.scopes; host = hostOf(host)) scopes.unshift(fitSelector(uniqueSelector(host)))
  return scopes
}

/**
 * Everything the annotation's `element` field carries, within the store's limits; `at` is where
 * the person clicked, in the overlay's viewport.
 */
export function describeElement(el: Element, at?: { x: number; y: number }): ElementInfo {
  const r = viewRect(el)
  const info: ElementInfo = {
    selector: fitSelector(uniqueSelector(el)),
    path: domPath(el),
    tag: clip(el.localName, LIMITS.tag),
    // What a person typed, hidden inputs, meta tokens, scripts and masked subtrees are redacted (early/redact.ts).
    html: trimmedHtml(redactedClone(el)),
    rect: { x: round(r.x), y: round(r.y), width: round(Math.max(0, r.width)), height: round(Math.max(0, r.height)) },
  }
  const text = textSnippet(el)
  if (text !== '') info.text = clip(text, LIMITS.text)
  const scopes = scopesOf(el)
  if (scopes.length > 0) info.scopes = scopes
  info.fingerprint = fingerprintOf(el)
  info.label = clip(isSensitiveElement(el) ? `${el.localName} ${MASKED}` : humanName(el), LIMITS.name)
  if (at && r.width > 0 && r.height > 0) {
    const fraction = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 1000) / 1000
    info.at = { x: fraction((at.x - r.left) / r.width), y: fraction((at.y - r.top) / r.height) }
  }
  return info
}
