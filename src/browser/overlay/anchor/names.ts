/** Elements named as a person would: "button 'Delete'", "list item 'Refund approved for order #4790'". */
import { redactText } from '../../early/redact.js'
import { clip, squash } from '../../shared/format.js'
import type { ElementInfo } from '../../shared/types.js'
import { accessibleName, accessibleRole } from './aria.js'

const ROLE_WORDS: Record<string, string> = {
  button: 'button', link: 'link', listitem: 'list item', heading: 'heading', textbox: 'text field', searchbox: 'search field',
  checkbox: 'checkbox', radio: 'radio button', img: 'image', combobox: 'select', navigation: 'navigation', dialog: 'dialog',
  row: 'row', cell: 'cell', columnheader: 'column header', paragraph: 'paragraph', list: 'list', table: 'table', form: 'form',
  banner: 'header', contentinfo: 'footer', main: 'main area', article: 'article', region: 'section', tab: 'tab',
  menuitem: 'menu item', option: 'option', slider: 'slider', switch: 'switch', progressbar: 'progress bar', spinbutton: 'number field',
}
const TAG_WORDS: Record<string, string> = { svg: 'icon', label: 'label', span: 'text', div: 'box', section: 'section', video: 'video', canvas: 'canvas', iframe: 'frame', select: 'select', summary: 'summary' }
const NAME_CHARS = 60

/** "button 'Delete'" from what is known of an element. */
function nameFrom(role: string | undefined, name: string | undefined, tag: string | undefined, text: string | undefined): string {
  const word = (role && ROLE_WORDS[role]) || (tag && TAG_WORDS[tag]) || tag || 'element'
  const said = squash(name || text || '')
  return said ? `${word} '${clip(said, NAME_CHARS)}'` : word
}

/** The element as a person names it. */
export function humanName(el: Element): string {
  const role = accessibleRole(el)
  let name = accessibleName(el, role)
  if (!name && el.localName === 'svg') name = el.querySelector('title')?.textContent ?? undefined
  // Redacted text: a masked subtree inside never names the element.
  return nameFrom(role, name, el.localName, redactText(el))
}

/** The recorded element's name: the one the overlay saw, else made from its role, name, tag and text. */
export function labelOf(info: ElementInfo): string {
  return info.label ?? nameFrom(info.role, info.accessibleName, info.tag, info.text)
}
