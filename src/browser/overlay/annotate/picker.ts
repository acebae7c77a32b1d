/**
 * Annotate mode: picking what to annotate on the page. While it is on, hovering reports the
 * nearest meaningful element under the pointer (the button around an icon, not the icon's
 * <path>), ↑/↓ or Alt+wheel walk to the parent and back, a click picks it (the page never sees
 * that click), Shift-click adds an element to the open annotation, a mouse text selection picks
 * the selected words (a touch selection too, once the finger is up and the selection has stopped
 * changing), a drag over no text (or with Alt) picks an area, and Enter picks the focused
 * element (keyboard users). Presses on the page are kept from its handlers; text can still be
 * selected. Iframes get a transparent shield while annotating: nothing reaches them, and inside
 * same-origin ones the element under the pointer is picked. Events inside the overlay's own
 * host are never touched.
 */
import { describeElement } from '../anchor/describe.js'
import { clip } from '../../shared/format.js'
import { h, replace } from '../../shared/dom.js'
import { LIMITS } from '../../../store/vocabulary.js'
import type { ElementInfo } from '../../shared/types.js'
import { composedParent, deepElementAt, frameOffset, innerRoot, isElement, viewRect } from '../anchor/dom.js'
import { quoteOf } from '../anchor/quote.js'
import { adoptStyles } from '../page/csp.js'
import { whenLoadedAndIdle } from '../page/after-load.js'
import type { HeldPick } from '../page/hold.js'
import { selectedRange } from '../page/selection.js'
import { coarsePointer } from '../views/layout.js'

export interface Target {
  element: Element
  info: ElementInfo
  selectedText?: string
  /** Where the selection or the dragged area was, when it was one. */
  rect?: DOMRect
  /** More elements of the same annotation (Shift-click, or inside a dragged area). */
  extra?: { element: Element; info: ElementInfo }[]
  /** A dragged area, in page coordinates. */
  area?: { x: number; y: number; width: number; height: number }
}

export interface PickerEvents {
  /** `add`: Shift-click, the element joins the open annotation. */
  pick(target: Target, add: boolean): void
  hover(element: Element | undefined): void
  changed(active: boolean): void
  /** The comment box is open (Enter types there, it does not pick). */
  composing(): boolean
  /** The area being dragged, in the viewport (undefined when the drag ends). */
  dragging?(rect: DOMRect | undefined): void
  /** Annotate mode is on, has highlighted what the pointer is on (or waited CURSOR_LATEST_MS), and the browser is idle: the moment for work the first highlight must not wait for. */
  settled?(): void
}

/** Put on the page's root while annotating (the page's own elements need the crosshair). */
/** How long after Annotate the crosshair comes at the latest, on a page that is never idle. */
const CURSOR_LATEST_MS = 300
const PAGE_CURSOR_CSS = '[data-marginalia-annotating], [data-marginalia-annotating] * { cursor: crosshair !important; }'
const SWALLOWED = ['pointerdown', 'mousedown', 'pointerup', 'touchstart', 'touchend'] as const
const CLICKS = ['click', 'dblclick', 'auxclick', 'contextmenu'] as const
/** What a person means when they point inside it: controls, links, labelled things. */
const MEANINGFUL = 'button, a[href], summary, label, select, [role="button"], [role="link"], [role="menuitem"], [role="tab"], [role="checkbox"], [role="switch"], [role="option"], [aria-label]'
/** What an area collects: the things a person would name. */
const COLLECTED = 'button, a[href], input, select, textarea, img, svg, h1, h2, h3, h4, h5, h6, li, label, p, td, th, [role], [data-testid]'
const SVG = 'http://www.w3.org/2000/svg'
/** A drag shorter than this is a click. */
const DRAG_PX = 8
/**
 * A touch selection is picked once it has not changed for this long with no finger down: a phone
 * selects a word on a long press, then the person drags its handles (which the page does not see
 * as touches, only as `selectionchange`).
 */
const TOUCH_SELECTION_SETTLE_MS = 500

/** Small inline things (icons, emphasis, images): a person pointing at one usually means the control around it. */
const SMALL = /^(svg|span|i|b|em|strong|small|img|kbd|abbr|sup|sub|code|mark|s|u)$/

/** The element a person means at `el`: the outermost <svg> of SVG internals, and the control or labelled element around small things. */
function meaningful(el: Element): Element {
  let cur = el
  while (cur.namespaceURI === SVG && cur.parentElement && cur.parentElement.namespaceURI === SVG) cur = cur.parentElement
  if (cur.matches(MEANINGFUL) || !SMALL.test(cur.localName)) return cur
  let p = composedParent(cur)
  for (let i = 0; p && i < 3 && p !== p.ownerDocument.body; i++, p = composedParent(p)) if (p.matches(MEANINGFUL)) return p
  return cur
}

export class Picker {
  active = false
  /** Transparent covers over the page's iframes while annotating (in the overlay's shadow root). */
  readonly shields = h('div', { class: 'shields' })
  private readonly shieldFrames = new WeakMap<Element, Element>()
  private suppressClick = false
  /** Takes the crosshair cursor off the page again. */
  private dropCursor: (() => void) | undefined
  /** The crosshair's stylesheet, waiting for an idle moment after the first highlight (or CURSOR_LATEST_MS). */
  private cursorPending: AbortController | undefined
  /** Asks for that idle moment: called by the first highlight of annotate mode. */
  private cursorWanted: (() => void) | undefined
  /** The element under the pointer, what it means, and where ↑ came from. */
  private raw: Element | undefined
  private current: Element | undefined
  private trail: Element[] = []
  /** A press on the page: `area` when a drag from it draws an area (it did not start on text, or Alt was held). */
  private press: { x: number; y: number; area: boolean; band?: DOMRect } | undefined
  /** Fingers on the page now (touches in the overlay are not counted). */
  private fingers = 0
  /** The last press was a touch (a phone, or a touch screen on a laptop). */
  private touched = false
  /** The page's selection changed while a finger was down (a long press selected words). */
  private selectedByTouch = false
  /** Picks a touch selection once it has settled. */
  private settle: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly host: HTMLElement,
    private readonly events: PickerEvents,
  ) {}

  attach(): void {
    window.addEventListener('pointermove', this.onPointerMove, { capture: true, passive: true })
    for (const type of SWALLOWED) window.addEventListener(type, this.swallow, true)
    window.addEventListener('mouseup', this.onMouseUp, true)
    for (const type of CLICKS) window.addEventListener(type, this.onClick, true)
    window.addEventListener('focusin', this.onFocusIn, true)
    window.addEventListener('keydown', this.onKeyDown, true)
    window.addEventListener('wheel', this.onWheel, { capture: true, passive: false })
    window.addEventListener('touchstart', this.onTouchStart, { capture: true, passive: true })
    window.addEventListener('touchend', this.onTouchEnd, { capture: true, passive: true })
    window.addEventListener('touchcancel', this.onTouchEnd, { capture: true, passive: true })
    document.addEventListener('selectionchange', this.onSelectionChange)
  }

  detach(): void {
    this.set(false)
    window.removeEventListener('pointermove', this.onPointerMove, true)
    for (const type of SWALLOWED) window.removeEventListener(type, this.swallow, true)
    window.removeEventListener('mouseup', this.onMouseUp, true)
    for (const type of CLICKS) window.removeEventListener(type, this.onClick, true)
    window.removeEventListener('focusin', this.onFocusIn, true)
    window.removeEventListener('keydown', this.onKeyDown, true)
    window.removeEventListener('wheel', this.onWheel, true)
    window.removeEventListener('touchstart', this.onTouchStart, true)
    window.removeEventListener('touchend', this.onTouchEnd, true)
    window.removeEventListener('touchcancel', this.onTouchEnd, true)
    document.removeEventListener('selectionchange', this.onSelectionChange)
  }

  set(on: boolean): void {
    if (this.active === on) return
    this.active = on
    if (on) {
      // The crosshair over the page costs it a style pass over every element (a cursor is
      // inherited): tens of ms on a page of thousands. It comes once the picker has highlighted
      // what the pointer is on, when the browser is next idle; CURSOR_LATEST_MS after Annotate at
      // the latest.
      const { signal } = (this.cursorPending = new AbortController())
      const put = (): void => {
        if (signal.aborted || this.dropCursor) return
        // A constructable stylesheet: a page's strict style-src would block a <style> element.
        this.dropCursor = adoptStyles(document, PAGE_CURSOR_CSS)
        document.documentElement.setAttribute('data-marginalia-annotating', '')
        this.events.settled?.()
      }
      const latest = setTimeout(put, CURSOR_LATEST_MS)
      signal.addEventListener('abort', () => clearTimeout(latest), { once: true })
      this.cursorWanted = () => whenLoadedAndIdle(put, signal, CURSOR_LATEST_MS)
    } else {
      this.cursorPending?.abort()
      this.cursorPending = undefined
      this.cursorWanted = undefined
      document.documentElement.removeAttribute('data-marginalia-annotating')
      this.dropCursor?.()
      this.dropCursor = undefined
      this.setCurrent(undefined)
      this.endDrag()
      this.stopSettling()
      this.fingers = 0
      this.selectedByTouch = false
    }
    this.layout()
    this.events.changed(on)
  }

  /** Shields over the page's iframes while annotating, on their boxes now. */
  layout(): void {
    const frames = this.active ? [...document.querySelectorAll('iframe, frame')] : []
    if (this.shields.childElementCount !== frames.length) {
      replace(this.shields, ...frames.map(() => h('div', { class: 'shield' })))
    }
    frames.forEach((frame, i) => {
      const shield = this.shields.children[i] as HTMLElement
      this.shieldFrames.set(shield, frame)
      const r = viewRect(frame)
      shield.style.cssText = `left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px`
    })
  }

  /** The shortcut or the toolbar: with text selected on the page, annotate it at once; otherwise toggle. */
  toggle(selection: Target | undefined = this.active ? undefined : this.selection()): void {
    if (!this.active && selection) this.events.pick(selection, false)
    else this.set(!this.active)
  }

  /** As `toggle`, with the page's selection as it was read earlier (page/selection.ts: before a click on the toolbar cleared it). */
  toggleFrom(range: Range | undefined): void {
    this.toggle(this.active ? undefined : this.selection(range))
  }

  /** What the person pointed at while annotate mode was on its way (page/hold.ts), picked now. */
  /** What the pointer was over while annotate mode was coming: highlighted now, as a move over it would. */
  hoverHeld(element: Element): void {
    if (!this.active || this.press || !element.isConnected || this.events.composing()) return
    this.raw = element
    this.trail = []
    this.setCurrent(meaningful(element))
  }

  pickHeld(held: HeldPick): void {
    if (!this.active || !held.element.isConnected) return
    const target = held.at ? meaningful(held.element) : held.element
    this.events.pick({ element: target, info: describeElement(target, held.at) }, held.shift)
  }

  /** Enter in annotate mode picks the focused page element. True when it did. */
  pickFocused(e: KeyboardEvent): boolean {
    if (!this.active || e.key !== 'Enter' || this.isOurs(e) || this.events.composing()) return false
    // The focused element itself, inside open shadow roots too.
    let target = document.activeElement
    while (target?.shadowRoot?.activeElement && target !== this.host) target = target.shadowRoot.activeElement
    if (!target || target === document.body || target === document.documentElement || target === this.host) return false
    this.events.pick({ element: target, info: describeElement(target) }, e.shiftKey)
    return true
  }

  /** The shield an event is on, if any. */
  private shieldOf(e: Event): Element | undefined {
    const first = e.composedPath()[0]
    return isElement(first) && this.shieldFrames.has(first) ? first : undefined
  }

  private isOurs(e: Event): boolean {
    return e.composedPath().includes(this.host) && !this.shieldOf(e)
  }

  /** The page's text selection (now, or a range read earlier) as a target (not one inside the overlay). */
  private selection(range: Range | undefined = selectedRange()): Target | undefined {
    if (!range) return undefined
    const text = range.toString().trim()
    if (text === '') return undefined
    const node = range.commonAncestorContainer
    const element = isElement(node) ? node : node.parentElement
    if (!element || element === this.host || this.host.contains(element)) return undefined
    const info = describeElement(element)
    const quote = quoteOf(range, element)
    if (quote) info.quote = quote
    return { element, info, selectedText: clip(text, LIMITS.selectedText), rect: range.getBoundingClientRect() }
  }

  /** The deepest page element an event is on (inside open shadow roots, and inside same-origin iframes through their shields). */
  private pageTarget(e: Event): Element | undefined {
    const shield = this.shieldOf(e)
    if (shield) {
      let el = this.shieldFrames.get(shield)
      const { clientX, clientY } = e as MouseEvent
      // Into same-origin frames, as deep as they go; a cross-origin frame is annotated as itself.
      for (let doc = el && innerRoot(el); el && doc && doc.nodeType === 9; doc = innerRoot(el)) {
        const o = frameOffset(doc as Document)
        const inner = deepElementAt(doc, clientX - o.x, clientY - o.y)
        if (!inner || inner === (doc as Document).documentElement) break
        el = inner
        if (el.localName !== 'iframe' && el.localName !== 'frame') break
      }
      return el
    }
    const t = e.composedPath()[0]
    const el = isElement(t) ? t : t instanceof Node ? t.parentElement : null
    if (!el || el === this.host || this.host.contains(el) || el === document.documentElement) return undefined
    return el
  }

  private setCurrent(el: Element | undefined): void {
    this.current = el
    this.events.hover(el)
    if (!el || !this.cursorWanted) return
    this.cursorWanted()
    this.cursorWanted = undefined
  }

  /** ↑: the parent (through shadow hosts and frames); ↓: back where ↑ came from. */
  private walk(up: boolean): boolean {
    const cur = this.current
    if (!cur) return false
    if (up) {
      const parent = composedParent(cur)
      if (!parent || parent === parent.ownerDocument.documentElement) return true
      this.trail.push(cur)
      this.setCurrent(parent)
    } else {
      const back = this.trail.pop()
      if (back) this.setCurrent(back)
    }
    return true
  }

  /** ↑/↓ walk wherever focus is (the toolbar too), unless the person types somewhere. */
  private readonly onKeyDown = (e: KeyboardEvent): void => {
    if (!this.active || typing(e) || this.events.composing() || e.altKey || e.ctrlKey || e.metaKey) return
    if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && this.walk(e.key === 'ArrowUp')) {
      e.preventDefault()
      e.stopPropagation()
    }
  }

  private readonly onWheel = (e: WheelEvent): void => {
    if (!this.active || !e.altKey || this.isOurs(e) || e.deltaY === 0) return
    if (this.walk(e.deltaY < 0)) {
      e.preventDefault()
      e.stopPropagation()
    }
  }

  private readonly onPointerMove = (e: PointerEvent): void => {
    if (!this.active || this.isOurs(e)) return
    const press = this.press
    if (press && e.buttons & 1) {
      const dx = e.clientX - press.x
      const dy = e.clientY - press.y
      if (press.area && (press.band || Math.hypot(dx, dy) >= DRAG_PX)) {
        press.band = new DOMRect(Math.min(press.x, e.clientX), Math.min(press.y, e.clientY), Math.abs(dx), Math.abs(dy))
        this.events.dragging?.(press.band)
      }
      return
    }
    const raw = this.pageTarget(e)
    if (raw === this.raw) return
    this.raw = raw
    this.trail = []
    this.setCurrent(raw && meaningful(raw))
  }

  /** Keyboard focus moves the highlight (a press focusing what it lands on does not). */
  private readonly onFocusIn = (e: FocusEvent): void => {
    if (!this.active || this.isOurs(e) || this.press) return
    this.raw = this.pageTarget(e)
    this.trail = []
    this.setCurrent(this.raw)
  }

  /** While annotating, the page does not see presses on it (text can still be selected; Alt+drag selects an area instead). */
  private readonly swallow = (e: Event): void => {
    if (!this.active || this.isOurs(e)) return
    e.stopPropagation()
    const m = e as MouseEvent
    if (e.type === 'pointerdown') {
      // A new press: a click left over from an earlier gesture (a long press fires none) is not to be swallowed.
      this.suppressClick = false
      this.touched = (e as PointerEvent).pointerType === 'touch'
    }
    if (e.type === 'pointerdown' && m.button === 0) this.press = { x: m.clientX, y: m.clientY, area: m.altKey || !!this.shieldOf(e) || !onText(m.clientX, m.clientY) }
    // A press off text (or with Alt) drags an area, Shift-click adds an element: neither starts or extends a text selection.
    if (e.type === 'mousedown' && (this.press?.area || m.shiftKey)) e.preventDefault()
  }

  private endDrag(): DOMRect | undefined {
    const band = this.press?.band
    this.press = undefined
    if (band) this.events.dragging?.(undefined)
    return band
  }

  private readonly onMouseUp = (e: MouseEvent): void => {
    if (!this.active || this.isOurs(e)) return
    e.stopPropagation()
    const area = this.press?.area ?? false
    const band = this.endDrag()
    const selection = area || e.shiftKey ? undefined : this.selection()
    if (selection) {
      this.suppressClick = true // the click that ends a drag is not a pick of its own
      this.events.pick(selection, false)
    } else if (band) {
      this.suppressClick = true
      document.getSelection()?.removeAllRanges()
      this.events.pick(areaTarget(band), false)
    }
  }

  /** Touch selection: the way a phone selects text fires no mouseup, so the selection itself is watched. */
  private readonly onTouchStart = (e: TouchEvent): void => {
    if (!this.active || this.isOurs(e)) return
    this.touched = true
    this.fingers = e.touches.length
    this.stopSettling()
  }

  private readonly onTouchEnd = (e: TouchEvent): void => {
    if (!this.active || this.isOurs(e)) return
    this.fingers = e.touches.length
    if (this.fingers > 0) return
    if (this.selectedByTouch && this.selection()) {
      // The tap that may end a long press is not a pick of its own: the selected words are.
      this.suppressClick = true
      this.startSettling()
    }
    this.selectedByTouch = false
  }

  private readonly onSelectionChange = (): void => {
    if (!this.active || this.events.composing() || !(this.touched || coarsePointer())) return
    if (!this.selection()) {
      this.stopSettling()
      return
    }
    if (this.fingers > 0) this.selectedByTouch = true
    else this.startSettling()
  }

  private startSettling(): void {
    this.stopSettling()
    this.settle = setTimeout(() => {
      this.settle = undefined
      if (!this.active || this.fingers > 0 || this.events.composing()) return
      const selection = this.selection()
      if (selection) this.events.pick(selection, false)
    }, TOUCH_SELECTION_SETTLE_MS)
  }

  private stopSettling(): void {
    if (this.settle !== undefined) clearTimeout(this.settle)
    this.settle = undefined
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
    const raw = this.pageTarget(e)
    const target = raw && raw === this.raw && this.current ? this.current : raw && meaningful(raw)
    if (target) this.events.pick({ element: target, info: describeElement(target, { x: e.clientX, y: e.clientY }) }, e.shiftKey)
  }
}

/** Whether the point is on a character of text (where a drag selects words). */
function onText(x: number, y: number): boolean {
  const caret = document.caretRangeFromPoint?.(x, y)
  const node = caret?.startContainer
  if (!caret || !node || node.nodeType !== 3) return false
  const text = node as Text
  for (const at of [caret.startOffset - 1, caret.startOffset]) {
    if (at < 0 || at >= text.length || /\s/.test(text.data[at]!)) continue
    const range = document.createRange()
    range.setStart(text, at)
    range.setEnd(text, at + 1)
    const r = range.getBoundingClientRect()
    if (x >= r.left - 2 && x <= r.right + 2 && y >= r.top && y <= r.bottom) return true
  }
  return false
}

/** Whether a key event goes to something the person types in. */
function typing(e: Event): boolean {
  const t = e.composedPath()[0]
  return isElement(t) && (t.localName === 'input' || t.localName === 'textarea' || t.localName === 'select' || (t as HTMLElement).isContentEditable)
}

function inside(r: DOMRect, band: DOMRect): boolean {
  return r.width > 0 && r.height > 0 && r.left >= band.left && r.top >= band.top && r.right <= band.right && r.bottom <= band.bottom
}

/**
 * A dragged area: the smallest element around it (the annotation's element) and the named things
 * inside it (outermost first, at most the store's limit), with the area in page coordinates.
 */
function areaTarget(band: DOMRect): Target {
  // The page's element under the middle of the area (the overlay's own host and shields looked through).
  let container: Element | null = document.elementsFromPoint(band.left + band.width / 2, band.top + band.height / 2).find((e) => !e.closest('[data-marginalia]')) ?? document.body
  while (container && container !== document.body) {
    const r = container.getBoundingClientRect()
    if (r.left <= band.left && r.top <= band.top && r.right >= band.right && r.bottom >= band.bottom) break
    container = container.parentElement
  }
  const element = container ?? document.body
  const chosen: Element[] = []
  for (const el of document.body.querySelectorAll(COLLECTED)) {
    if (chosen.length >= LIMITS.elements) break
    if (el.closest('[data-marginalia]') || chosen.some((c) => c.contains(el)) || !inside(el.getBoundingClientRect(), band)) continue
    chosen.push(el)
  }
  return {
    element,
    info: describeElement(element),
    rect: band,
    extra: chosen.map((el) => ({ element: el, info: describeElement(el) })),
    area: { x: Math.round(band.left + scrollX), y: Math.round(band.top + scrollY), width: Math.round(band.width), height: Math.round(band.height) },
  }
}
