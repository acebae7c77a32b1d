/**
 * Annotate mode: picking what to annotate on the page. While it is on, hovering reports the
 * element under the pointer, a click picks it (the page never sees that click), a mouse text
 * selection picks the selection, and Enter picks the focused element (keyboard users). Presses on
 * the page are kept from its handlers; text can still be selected. Events inside the overlay's own
 * host are never touched.
 */
import { describeElement } from './describe.js'
import { clip } from '../shared/format.js'
import { LIMITS } from '../../store/vocabulary.js'
import type { ElementInfo } from '../shared/types.js'

export interface Target {
  element: Element
  info: ElementInfo
  selectedText?: string
  /** Where the selection was, when it was a selection. */
  rect?: DOMRect
}

export interface PickerEvents {
  pick(target: Target): void
  hover(element: Element | undefined): void
  changed(active: boolean): void
  /** The comment box is open (Enter types there, it does not pick). */
  composing(): boolean
}

/** Put on the page's root while annotating (the page's own elements need the crosshair). */
const PAGE_CURSOR_CSS = '[data-marginalia-annotating], [data-marginalia-annotating] * { cursor: crosshair !important; }'
const SWALLOWED = ['pointerdown', 'mousedown', 'pointerup', 'touchstart', 'touchend'] as const
const CLICKS = ['click', 'dblclick', 'auxclick', 'contextmenu'] as const

export class Picker {
  active = false
  private suppressClick = false
  private remembered: Target | undefined
  private readonly cursorStyle: HTMLStyleElement

  constructor(
    private readonly host: HTMLElement,
    private readonly events: PickerEvents,
  ) {
    this.cursorStyle = document.createElement('style')
    this.cursorStyle.textContent = PAGE_CURSOR_CSS
    this.cursorStyle.setAttribute('data-marginalia', '')
  }

  attach(): void {
    window.addEventListener('pointermove', this.onPointerMove, { capture: true, passive: true })
    for (const type of SWALLOWED) window.addEventListener(type, this.swallow, true)
    window.addEventListener('mouseup', this.onMouseUp, true)
    for (const type of CLICKS) window.addEventListener(type, this.onClick, true)
    window.addEventListener('focusin', this.onFocusIn, true)
  }

  detach(): void {
    this.set(false)
    window.removeEventListener('pointermove', this.onPointerMove, true)
    for (const type of SWALLOWED) window.removeEventListener(type, this.swallow, true)
    window.removeEventListener('mouseup', this.onMouseUp, true)
    for (const type of CLICKS) window.removeEventListener(type, this.onClick, true)
    window.removeEventListener('focusin', this.onFocusIn, true)
  }

  set(on: boolean): void {
    if (this.active === on) return
    this.active = on
    if (on) {
      ;(document.head ?? document.documentElement).appendChild(this.cursorStyle)
      document.documentElement.setAttribute('data-marginalia-annotating', '')
    } else {
      document.documentElement.removeAttribute('data-marginalia-annotating')
      this.cursorStyle.remove()
      this.events.hover(undefined)
    }
    this.events.changed(on)
  }

  /** The shortcut or the toolbar: with text selected on the page, annotate it at once; otherwise toggle. */
  toggle(selection: Target | undefined = this.active ? undefined : this.selection()): void {
    if (!this.active && selection) this.events.pick(selection)
    else this.set(!this.active)
  }

  /** Read the page's selection before a click on the toolbar can clear it; `toggleRemembered` uses it. */
  remember(): void {
    this.remembered = this.selection()
  }

  toggleRemembered(): void {
    const selection = this.remembered
    this.remembered = undefined
    this.toggle(this.active ? undefined : selection)
  }

  /** Enter in annotate mode picks the focused page element. True when it did. */
  pickFocused(e: KeyboardEvent): boolean {
    if (!this.active || e.key !== 'Enter' || this.isOurs(e) || this.events.composing()) return false
    const target = document.activeElement
    if (!target || target === document.body || target === document.documentElement || target === this.host) return false
    this.events.pick({ element: target, info: describeElement(target) })
    return true
  }

  private isOurs(e: Event): boolean {
    return e.composedPath().includes(this.host)
  }

  /** The page's current text selection as a target (not one inside the overlay). */
  private selection(): Target | undefined {
    const selection = document.getSelection()
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return undefined
    const text = selection.toString().trim()
    if (text === '') return undefined
    const range = selection.getRangeAt(0)
    const node = range.commonAncestorContainer
    const element = node instanceof Element ? node : node.parentElement
    if (!element || element === this.host || this.host.contains(element)) return undefined
    return { element, info: describeElement(element), selectedText: clip(text, LIMITS.selectedText), rect: range.getBoundingClientRect() }
  }

  private pageTarget(e: Event): Element | undefined {
    const t = e.composedPath()[0]
    const el = t instanceof Element ? t : t instanceof Node ? t.parentElement : null
    if (!el || el === this.host || this.host.contains(el) || el === document.documentElement) return undefined
    return el
  }

  private readonly onPointerMove = (e: PointerEvent): void => {
    if (this.active && !this.isOurs(e)) this.events.hover(this.pageTarget(e))
  }

  private readonly onFocusIn = (e: FocusEvent): void => {
    if (this.active && !this.isOurs(e)) this.events.hover(this.pageTarget(e))
  }

  /** While annotating, the page does not see presses on it (text can still be selected). */
  private readonly swallow = (e: Event): void => {
    if (this.active && !this.isOurs(e)) e.stopPropagation()
  }

  private readonly onMouseUp = (e: MouseEvent): void => {
    if (!this.active || this.isOurs(e)) return
    e.stopPropagation()
    const selection = this.selection()
    if (selection) {
      this.suppressClick = true // the click that ends a drag is not a pick of its own
      this.events.pick(selection)
    }
  }

  private readonly onClick = (e: MouseEvent): void => {
    if (!this.active || this.isOurs(e)) return
    e.preventDefault()
    e.stopPropagation()
    if (e.type !== 'click') return
    if (this.suppressClick) {
      this.suppressClick = false
      return
    }
    const target = this.pageTarget(e)
    if (target) this.events.pick({ element: target, info: describeElement(target) })
  }
}
