/**
 * The composed tree: elements inside open shadow roots and same-origin iframes, reached the same
 * way they are recorded. Elements of an iframe belong to another window, so nothing here uses
 * `instanceof` (it is false across windows): node types and duck typing only.
 */

/** A place selectors are matched in: a document or an open shadow root. */
export type Root = Document | ShadowRoot

const shadowListeners = new Set<(root: ShadowRoot) => void>()

/** Hear of each open shadow root the walker goes into (the top layer watches them for modal dialogs). Returns how to stop. */
export function onShadowRoot(listener: (root: ShadowRoot) => void): () => void {
  shadowListeners.add(listener)
  return () => shadowListeners.delete(listener)
}

function entered(root: Root): void {
  if (root.nodeType === 11) for (const l of shadowListeners) l(root as ShadowRoot)
}

export function isElement(n: unknown): n is Element {
  return typeof n === 'object' && n !== null && (n as Node).nodeType === 1
}

export function isShadowRoot(n: Node): n is ShadowRoot {
  return n.nodeType === 11 && 'host' in n
}

/** The iframe element showing `doc`, when it is a same-origin frame below the overlay's own document. */
function frameOf(doc: Document): Element | null {
  if (doc === document) return null
  try {
    return doc.defaultView?.frameElement ?? null
  } catch {
    return null
  }
}

/** The shadow host or iframe element `el`'s root hangs from (null at the overlay's document). */
export function hostOf(el: Element): Element | null {
  const root = el.getRootNode()
  if (isShadowRoot(root)) return root.host
  return root.nodeType === 9 ? frameOf(root as Document) : null
}

/** The parent in the composed tree: the parent element, else the shadow host or iframe element. */
export function composedParent(el: Element): Element | null {
  return el.parentElement ?? hostOf(el)
}

/** Whether `a` is `b` or contains it, across shadow roots and frames. */
function composedContains(a: Element, b: Element): boolean {
  for (let cur: Element | null = b; cur; cur = composedParent(cur)) if (cur === a) return true
  return false
}

function query(root: Root, selector: string): Element | null {
  try {
    return root.querySelector(selector)
  } catch {
    return null
  }
}

/** What a host opens onto: its open shadow root, or the document of a same-origin iframe. */
export function innerRoot(host: Element): Root | null {
  if (host.localName === 'iframe' || host.localName === 'frame') {
    try {
      return (host as HTMLIFrameElement).contentDocument
    } catch {
      return null
    }
  }
  return host.shadowRoot
}

/** Follow recorded scopes (host selectors, outermost first) from the overlay's document. */
export function rootOf(scopes: readonly string[] | undefined): Root | null {
  let root: Root = document
  for (const selector of scopes ?? []) {
    const host = query(root, selector)
    const inner = host ? innerRoot(host) : null
    if (!inner) return null
    entered(inner)
    root = inner
  }
  return root
}

/** The deepest element at a point of `root`, through open shadow roots (not into frames). */
export function deepElementAt(root: Root, x: number, y: number): Element | null {
  let el = root.elementFromPoint(x, y)
  while (el?.shadowRoot) {
    entered(el.shadowRoot)
    const inner = el.shadowRoot.elementFromPoint(x, y)
    if (!inner || inner === el) break
    el = inner
  }
  return el
}

/** Offset of `doc`'s viewport in the overlay's viewport (0,0 for the overlay's own document). */
export function frameOffset(doc: Document): { x: number; y: number } {
  let x = 0
  let y = 0
  for (let fe = frameOf(doc); fe; fe = frameOf(fe.ownerDocument)) {
    const r = fe.getBoundingClientRect()
    const cs = getComputedStyle(fe)
    x += r.left + fe.clientLeft + parseFloat(cs.paddingLeft)
    y += r.top + fe.clientTop + parseFloat(cs.paddingTop)
  }
  return { x, y }
}

/** `el`'s box in the overlay's viewport (elements in iframes are offset by their frames). */
export function viewRect(el: Element): DOMRect {
  const r = el.getBoundingClientRect()
  if (el.ownerDocument === document) return r
  const o = frameOffset(el.ownerDocument)
  return new DOMRect(r.x + o.x, r.y + o.y, r.width, r.height)
}

export interface Box {
  left: number
  top: number
  right: number
  bottom: number
}

function intersect(a: Box, b: Box): Box {
  return { left: Math.max(a.left, b.left), top: Math.max(a.top, b.top), right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom) }
}

/** Ancestors that clip `el` (overflow other than visible) and the frames it is in, nearest first. */
export function clippers(el: Element): Element[] {
  const out: Element[] = []
  for (let cur = composedParent(el); cur; cur = composedParent(cur)) {
    if (cur.localName === 'iframe' || cur.localName === 'frame') {
      out.push(cur)
      continue
    }
    if (cur === cur.ownerDocument.documentElement || cur === cur.ownerDocument.body) continue
    const cs = getComputedStyle(cur)
    if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') out.push(cur)
  }
  return out
}

/** The part of the overlay's viewport where `el` can be seen: its clippers' client boxes and the viewport. */
export function visibleBox(clip: readonly Element[], viewport: { width: number; height: number }): Box {
  let box: Box = { left: 0, top: 0, right: viewport.width, bottom: viewport.height }
  for (const c of clip) {
    const r = viewRect(c)
    const left = r.left + c.clientLeft
    const top = r.top + c.clientTop
    box = intersect(box, { left, top, right: left + c.clientWidth, bottom: top + c.clientHeight })
  }
  return box
}

/**
 * Whether the point (overlay viewport) is covered by fixed or sticky page furniture (a sticky
 * header) rather than showing `el`. Elements of the overlay (`host`) are looked through.
 */
export function coveredAt(el: Element, x: number, y: number, host: Element): boolean {
  const o = frameOffset(el.ownerDocument)
  const root = el.getRootNode() as Root
  const hits = root.elementsFromPoint(x - o.x, y - o.y).filter((h) => h !== host && !host.contains(h))
  const top = hits[0]
  if (!top || composedContains(el, top) || composedContains(top, el)) return false
  for (let cur: Element | null = top, i = 0; cur && i < 6; cur = cur.parentElement, i++) {
    const p = getComputedStyle(cur).position
    if (p === 'fixed' || p === 'sticky') return true
  }
  return false
}

/** The selector the agent gets: shadow hosts and iframes first, `host >>> inner` (as src/views/summary.ts writes it). */
export function composedSelector(info: { selector: string; scopes?: string[] | undefined }): string {
  return info.scopes && info.scopes.length > 0 ? [...info.scopes, info.selector].join(' >>> ') : info.selector
}
