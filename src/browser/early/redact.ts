/**
 * What of a page may leave it: one redaction module for everything Marginalia records of a
 * person's page — the element an annotation is about (its HTML and text), the screenshot (the
 * areas to paint over), the page log, and a recording of the person's steps. Browser code with
 * no dependencies (the early recorder bundles it), never changing the page it reads.
 *
 * Secret, whatever the origin:
 *   - what a person typed: the values of inputs and textareas (the `value` attribute, the
 *     property, a textarea's text) — buttons keep their labels;
 *   - hidden inputs' values (CSRF tokens, ids);
 *   - `<meta>` contents but for a few harmless names (csrf-token, api keys, nonces live there);
 *   - `<script>` contents, and every `nonce` attribute;
 *   - password fields and inputs whose autocomplete names a secret (`cc-*`, `one-time-code`,
 *     `new-password`, `current-password`): masked whole, in pictures too, even when empty;
 *   - everything inside `[data-marginalia-mask]`, `[data-private]` or `.sensitive`: replaced by a
 *     placeholder in HTML and text, painted over in pictures.
 */

/** The attributes and class that mask a subtree: Marginalia's own and two common conventions. */
export const MASK_SELECTOR = '[data-marginalia-mask], [data-private], .sensitive'
/** What stands for a value in HTML and text. */
const REDACTED = '[redacted]'
/** What stands for a masked subtree in HTML and text. */
export const MASKED = '[masked]'
/** The colour masked areas are painted in screenshots. */
export const MASK_COLOUR = '#3d3d3d'

const SECRET_AUTOCOMPLETE = /(^|\s)(cc-[a-z-]+|one-time-code|new-password|current-password)(\s|$)/i
/** Input types whose `value` is a label the page wrote, not something the person typed. */
const LABEL_INPUTS = new Set(['button', 'submit', 'reset', 'image'])
/** Input types with no text to show (their state is not a secret in the picture). */
const NO_TEXT_INPUTS = new Set(['checkbox', 'radio', 'range', 'color', 'file', 'hidden', ...LABEL_INPUTS])
/** `<meta name>` values whose content is about the document, never a credential. */
const SAFE_META = new Set(['viewport', 'description', 'theme-color', 'color-scheme', 'robots', 'generator', 'referrer', 'format-detection', 'keywords', 'author'])
/** Query parameters named like secrets: a URL keeps their names, not their values. */
const SECRET_PARAM = /token|key|secret|passw|auth|session|sig|credential|code/i

function isInput(el: Element): el is HTMLInputElement {
  return el.localName === 'input'
}

function inputType(el: HTMLInputElement): string {
  return (el.getAttribute('type') ?? 'text').trim().toLowerCase()
}

/** Inside (or itself) a masked subtree, shadow roots crossed. */
export function isMasked(el: Element): boolean {
  // One `closest` per tree (the element's, then each shadow host's up to the document).
  for (let cur: Element | null = el; cur; ) {
    if (cur.closest(MASK_SELECTOR)) return true
    const root = cur.getRootNode()
    cur = root instanceof ShadowRoot ? root.host : null
  }
  return false
}

/** A field whose very presence on a picture is a secret: passwords, card numbers, one-time codes. */
function isSecretField(el: Element): boolean {
  if (!isInput(el)) return false
  const type = inputType(el)
  return type === 'password' || SECRET_AUTOCOMPLETE.test(el.getAttribute('autocomplete') ?? '')
}

/**
 * Whether nothing of `el` may leave the page: a password field, an input whose autocomplete names a
 * secret (cc-*, one-time-code, new-password, current-password), a hidden input, or anything inside
 * `[data-marginalia-mask]`, `[data-private]`, `.sensitive`.
 */
export function isSensitiveElement(el: Element): boolean {
  if (isSecretField(el)) return true
  if (isInput(el) && inputType(el) === 'hidden') return true
  return isMasked(el)
}

/** Whether `el` holds something the person typed (a text-like input or a textarea). */
function holdsTyping(el: Element): boolean {
  if (el.localName === 'textarea') return true
  return isInput(el) && !NO_TEXT_INPUTS.has(inputType(el))
}

/** A masked element as it may be shown: its tag and the attribute that masks it, the placeholder inside. */
function placeholderFor(el: Element, doc: Document): Element {
  const out = doc.createElement(el.localName === 'input' || el.localName === 'img' ? 'span' : el.localName)
  out.setAttribute('data-marginalia-masked', '')
  out.textContent = MASKED
  return out
}

/** Redact a detached copy in place (the copy `clone` of the live `from`: values typed since load live only on `from`). */
function redactCopy(clone: Element, doc: Document): Element {
  if (clone.matches(MASK_SELECTOR) || isSecretField(clone)) return placeholderFor(clone, doc)
  for (const masked of [...clone.querySelectorAll(MASK_SELECTOR)]) masked.replaceWith(placeholderFor(masked, doc))
  const all = [clone, ...clone.querySelectorAll('*')]
  for (const el of all) {
    if (el.hasAttribute('nonce')) el.setAttribute('nonce', REDACTED)
    switch (el.localName) {
      case 'input': {
        const input = el as HTMLInputElement
        if (isSecretField(input)) {
          input.replaceWith(placeholderFor(input, doc))
          break
        }
        const type = inputType(input)
        if (!LABEL_INPUTS.has(type) && (type === 'hidden' || !NO_TEXT_INPUTS.has(type)) && input.hasAttribute('value')) input.setAttribute('value', REDACTED)
        break
      }
      case 'textarea':
        if (el.textContent !== '') el.textContent = REDACTED
        break
      case 'script':
        if (el.textContent !== '') el.textContent = ''
        break
      case 'meta': {
        const name = (el.getAttribute('name') ?? el.getAttribute('property') ?? el.getAttribute('http-equiv') ?? '').toLowerCase()
        if (el.hasAttribute('content') && !SAFE_META.has(name)) el.setAttribute('content', REDACTED)
        break
      }
    }
  }
  return clone
}

/**
 * A redacted, detached copy of `el` (never attached, never in the page): every secret above
 * replaced. What `describe` serialises and trims.
 */
export function redactedClone(el: Element): Element {
  const doc = el.ownerDocument
  const clone = el.cloneNode(true) as Element
  // A value typed into a field lives on the live element's property, never in outerHTML: the copy gets
  // REDACTED where the live field holds anything, so the agent knows something was typed.
  const live = [el, ...el.querySelectorAll('input, textarea')]
  const copies = [clone, ...clone.querySelectorAll('input, textarea')]
  live.forEach((field, i) => {
    const copy = copies[i]
    if (!copy || !holdsTyping(field)) return
    const value = (field as HTMLInputElement | HTMLTextAreaElement).value
    if (value === '') return
    if (copy.localName === 'textarea') copy.textContent = REDACTED
    else copy.setAttribute('value', REDACTED)
  })
  return redactCopy(clone, doc)
}

const SKIP_TEXT = new Set(['script', 'style', 'template', 'noscript', 'textarea'])
const BLOCK = /^(address|article|aside|blockquote|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|tr|td|th|ul|br)$/

function hasSensitiveInside(el: Element): boolean {
  return el.querySelector(`${MASK_SELECTOR}, textarea`) !== null
}

/** The text under `el`, masked subtrees as `[masked]`, without scripts, styles and textareas. */
function walkText(el: Element): string {
  const parts: string[] = []
  const walk = (node: Node): void => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 3) parts.push(child.nodeValue ?? '')
      else if (child.nodeType === 1) {
        const e = child as Element
        if (e.matches(MASK_SELECTOR)) parts.push(` ${MASKED} `)
        else if (SKIP_TEXT.has(e.localName)) continue
        else {
          const block = BLOCK.test(e.localName)
          if (block) parts.push('\n')
          walk(e)
          if (block) parts.push('\n')
        }
      }
    }
  }
  walk(el)
  return parts.join('').replace(/[ \t]+/g, ' ').replace(/ *\n[\s]*/g, '\n').trim()
}

/**
 * The text of `el` as a person reads it (innerText), with masked subtrees as `[masked]` and
 * no textarea contents; `[masked]` alone when `el` itself is sensitive.
 */
export function redactText(el: Element): string {
  if (isSensitiveElement(el)) return MASKED
  if (el.localName === 'textarea') return (el as HTMLTextAreaElement).value === '' ? '' : REDACTED
  if (!hasSensitiveInside(el)) return 'innerText' in el ? (el as HTMLElement).innerText : (el.textContent ?? '')
  return walkText(el)
}

/** `el.textContent` redacted as {@link redactText} does (no layout: cheap enough to compare thousands of elements). */
export function redactTextContent(el: Element): string {
  if (isSensitiveElement(el)) return MASKED
  if (el.localName === 'textarea') return (el as HTMLTextAreaElement).value === '' ? '' : REDACTED
  return hasSensitiveInside(el) ? walkText(el) : (el.textContent ?? '')
}

/** Every element under `root`, open shadow roots included. */
function* elementsUnder(root: ParentNode): Generator<Element> {
  for (const el of root.querySelectorAll('*')) {
    yield el
    if (el.shadowRoot) yield* elementsUnder(el.shadowRoot)
  }
}

/**
 * The areas of the viewport a screenshot of `root` must paint over (viewport coordinates, empty
 * ones left out): masked subtrees (the outermost), secret fields (even empty), and every input or
 * textarea holding something typed. `exclude`: a subtree never pictured (the overlay's own host).
 */
export function maskRects(root: ParentNode = document, exclude?: Element): DOMRect[] {
  const out: DOMRect[] = []
  for (const el of elementsUnder(root)) {
    if (exclude && (el === exclude || exclude.contains(el))) continue
    let hide: boolean
    const parent = el.parentElement
    if (isMasked(el)) {
      // The outermost masked element (its box covers the rest), and any descendant drawn outside its parent's box (positioned, overflowing).
      if (!parent || !isMasked(parent)) hide = true
      else {
        const p = parent.getBoundingClientRect()
        const r = el.getBoundingClientRect()
        hide = r.left < p.left || r.top < p.top || r.right > p.right || r.bottom > p.bottom
      }
    } else hide = isSecretField(el) || (holdsTyping(el) && (el as HTMLInputElement | HTMLTextAreaElement).value !== '')
    if (!hide) continue
    const r = el.getBoundingClientRect()
    if (r.width > 0 && r.height > 0) out.push(r)
  }
  return out
}

/** Paint `rects` (viewport coordinates) on a 2D context that shows the viewport offset by `origin`, scaled by `scale`. */
export function paintMasks(ctx: CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D, rects: readonly DOMRectReadOnly[], origin: { x: number; y: number }, scale: number): void {
  ctx.save()
  ctx.fillStyle = MASK_COLOUR
  for (const r of rects) ctx.fillRect((r.left - origin.x) * scale, (r.top - origin.y) * scale, r.width * scale, r.height * scale)
  ctx.restore()
}

/** A URL without credentials and without the values of parameters named like secrets (token, key, secret, password, auth, session …). */
export function redactUrl(raw: string, base = location.href): string {
  try {
    const url = new URL(raw, base)
    for (const name of [...new Set(url.searchParams.keys())]) if (SECRET_PARAM.test(name)) url.searchParams.set(name, 'REDACTED')
    url.username = ''
    url.password = ''
    return url.href
  } catch {
    return raw.split('?')[0] ?? ''
  }
}

/**
 * A short description of a value the page logged: an element is named by its tag, id, name and
 * type only — never a value, attribute or content (light: the early recorder bundles it).
 */
export function describeLogged(value: unknown): string | undefined {
  if (typeof Element === 'undefined' || !(value instanceof Element)) return undefined
  let out = `<${value.localName}`
  for (const name of ['id', 'name', 'type']) {
    const v = value.getAttribute(name)
    if (v !== null) out += ` ${name}="${v.slice(0, 60).replace(/["<>&]/g, '')}"`
  }
  return `${out}>`
}
