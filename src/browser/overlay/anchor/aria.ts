/** The element's accessible role and name: what a person would call it, and what goes with an annotation. */
import { LIMITS } from '../../../store/vocabulary.js'
import { clip } from '../../shared/format.js'

const IMPLICIT: Record<string, string> = {
  BUTTON: 'button', NAV: 'navigation', MAIN: 'main', ASIDE: 'complementary', FORM: 'form', UL: 'list', OL: 'list', LI: 'listitem',
  TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader', TEXTAREA: 'textbox', SELECT: 'combobox', DIALOG: 'dialog', IMG: 'img',
  H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading', P: 'paragraph', ARTICLE: 'article',
  HEADER: 'banner', FOOTER: 'contentinfo', SECTION: 'region', PROGRESS: 'progressbar', HR: 'separator', OPTION: 'option',
}
const INPUT_ROLES: Record<string, string> = { checkbox: 'checkbox', radio: 'radio', range: 'slider', button: 'button', submit: 'button', reset: 'button', search: 'searchbox', number: 'spinbutton' }

export function accessibleRole(el: Element): string | undefined {
  const explicit = el.getAttribute('role')?.trim().split(/\s+/)[0]
  if (explicit) return explicit
  if (el.tagName === 'A') return el.hasAttribute('href') ? 'link' : undefined
  if (el.tagName === 'INPUT') return INPUT_ROLES[(el as HTMLInputElement).type] ?? 'textbox'
  return IMPLICIT[el.tagName]
}

const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'checkbox', 'radio', 'option', 'cell', 'columnheader', 'row', 'listitem', 'menuitem', 'tab', 'tooltip'])

export function accessibleName(el: Element, role = accessibleRole(el)): string | undefined {
  const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim()
  const label = squash(el.getAttribute('aria-label'))
  if (label) return clip(label, LIMITS.accessibleName)
  const ids = el.getAttribute('aria-labelledby')
  if (ids) {
    const text = squash(ids.split(/\s+/).map((id) => el.ownerDocument.getElementById(id)?.textContent ?? '').join(' '))
    if (text) return clip(text, LIMITS.accessibleName)
  }
  if (el instanceof HTMLImageElement && el.alt) return clip(squash(el.alt), LIMITS.accessibleName)
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
    const text = squash([...(el.labels ?? [])].map((l) => l.textContent).join(' '))
    if (text) return clip(text, LIMITS.accessibleName)
    if (el instanceof HTMLInputElement && ['submit', 'button', 'reset'].includes(el.type) && el.value) return clip(el.value, LIMITS.accessibleName)
  }
  if (role !== undefined && NAME_FROM_CONTENT.has(role)) {
    const text = squash(el.textContent)
    if (text) return clip(text, LIMITS.accessibleName)
  }
  const title = squash(el.getAttribute('title'))
  return title ? clip(title, LIMITS.accessibleName) : undefined
}
