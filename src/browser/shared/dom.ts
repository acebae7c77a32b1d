/** A tiny element builder and positioning helpers (no framework). */

type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: never) => void)>

/**
 * `h('button', { class: 'x', 'aria-label': 'Close', onclick: () => … }, 'text', child)`.
 * `on…` functions become listeners; `true` sets an empty attribute; false/null/undefined skip it.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === 'function') el.addEventListener(name.slice(2), value as EventListener)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  append(el, ...children)
  return el
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c)
  }
}

/** Replace all children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild)
  append(parent, ...children)
}

export interface Box {
  left: number
  top: number
  right: number
  bottom: number
}

/**
 * Place a fixed panel of size `w`×`ht` beside `anchor` (right, then left, then below, then
 * above), kept inside the viewport with a margin and clear of `bottomReserve` pixels at the
 * bottom (the toolbar). Returns its top-left corner.
 */
export function placeBeside(anchor: Box, w: number, ht: number, margin = 12, gap = 10, bottomReserve = 0): { left: number; top: number } {
  const vw = document.documentElement.clientWidth || window.innerWidth
  const vh = (document.documentElement.clientHeight || window.innerHeight) - bottomReserve
  const clampX = (x: number) => Math.max(margin, Math.min(x, vw - w - margin))
  const clampY = (y: number) => Math.max(margin, Math.min(y, vh - ht - margin))
  if (anchor.right + gap + w + margin <= vw) return { left: anchor.right + gap, top: clampY(anchor.top) }
  if (anchor.left - gap - w >= margin) return { left: anchor.left - gap - w, top: clampY(anchor.top) }
  if (anchor.bottom + gap + ht + margin <= vh) return { left: clampX(anchor.left), top: anchor.bottom + gap }
  if (anchor.top - gap - ht >= margin) return { left: clampX(anchor.left), top: anchor.top - gap - ht }
  return { left: clampX(anchor.right + gap), top: clampY(anchor.top) }
}
