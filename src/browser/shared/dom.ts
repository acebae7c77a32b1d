/** A tiny element builder (no framework). */

export type Child = Node | string | number | null | undefined | false
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: never) => void)>

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

function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c)
  }
}

/**
 * `el`'s text, written only when it differs: writing a text node (even the same text) lays the
 * page out and paints it again in the next frame, which costs a page of thousands of elements
 * milliseconds each time.
 */
export function setText(el: Node, text: string): void {
  if (el.textContent !== text) el.textContent = text
}

/** Replace all children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild)
  append(parent, ...children)
}
