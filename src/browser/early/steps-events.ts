/** What the steps recorder's listeners ask of an event: what it acts on, whether a key edits a field, whether an element is typed in. */

/** What a click acts on: the nearest of these around the element clicked. */
export const ACTIONABLE = 'a[href],button,input,select,textarea,label,summary,[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=treeitem],[onclick],[tabindex]:not([tabindex="-1"])'
export type TextField = HTMLInputElement | HTMLTextAreaElement
/** Keys other than characters that change what a field holds (an IME's keys among them). */
const EDIT_KEYS = new Set(['Backspace', 'Delete', 'Process', 'Unidentified', 'Dead'])

/** Whether a key changes what a field holds: a character (not a shortcut but paste, cut, undo, redo) or an editing key. */
export function edits(e: KeyboardEvent): boolean {
  const key = e.key
  if (key.length === 1) return !(e.ctrlKey || e.metaKey) || e.altKey || /^[vxyz]$/i.test(key)
  return EDIT_KEYS.has(key)
}
const NOT_TYPED = /^(checkbox|radio|submit|button|reset|image|file)$/

export function isTextField(el: EventTarget | null | undefined): el is TextField {
  return el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && !NOT_TYPED.test(el.type))
}

/**
 * The element an event is about, unless it is the overlay's own: its hosts carry `data-marginalia`
 * and keep their elements in a shadow root, so an event inside one reaches the window with the
 * host as its target — one attribute read, no walk up the page.
 */
export function pageElement(e: Event): Element | undefined {
  const t = e.target
  if (!(t instanceof Element)) return undefined
  return t.hasAttribute('data-marginalia') ? undefined : t
}
