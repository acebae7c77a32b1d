/**
 * Pins: one numbered marker per annotation, on its element where the person clicked (or at the
 * end of the selected words), in its status colour, with the agent's open question marked. Where
 * an annotation is comes from its anchor (see anchor/resolve.ts): a pin whose element cannot be
 * found for sure is shown apart as "not found", never on another element. A pin hides while its
 * point is scrolled out of its scroll container or the viewport, or covered by fixed or sticky
 * page furniture; pins that would overlap are moved apart.
 */
import { h, setText } from '../../shared/dom.js'
import { STATUS_LABEL, clip, openQuestionOf } from '../../shared/format.js'
import type { Annotation } from '../../shared/types.js'
import { viewport, type Box } from './layout.js'
import { coveredAt, frameOffset, viewRect, visibleBox } from '../anchor/dom.js'
import { Anchors, type Anchor, type AnchorState } from '../anchor/resolve.js'
import { isWaiting } from '../sync/outbox.js'

/** The pin's body beside its tip (see .pin in overlay.css: translate(1px, -25px), 26 px square). */
const PIN = { left: 1, top: -25, size: 26 }

export class Pins {
  readonly element = h('div', { class: 'pins' })
  private readonly buttons = new Map<string, HTMLButtonElement>()
  readonly anchors: Anchors
  /** Which annotations get a pin (resolved and dismissed ones are hidden unless asked for); numbers stay those of `ordered`. */
  shows: (a: Annotation, openId: string | undefined) => boolean = () => true

  constructor(
    /** The overlay's own host: never an annotation's element. */
    private readonly host: HTMLElement,
    /** A pin was clicked. */
    private readonly clicked: (id: string) => void,
    /** An anchor was looked up: follow its element. */
    private readonly found: (anchor: Anchor) => void = () => {},
  ) {
    this.anchors = new Anchors(host)
  }

  /**
   * One pin per annotation, numbered in `ordered`'s order; pins of annotations gone are removed.
   * `waiting`: what this page sent that is still in the outbox — a pin each, without a number
   * (the server gives it one), dashed, "not sent yet".
   */
  render(ordered: readonly Annotation[], openId: string | undefined, waiting: readonly Annotation[] = []): void {
    const seen = new Set<string>()
    ;[...ordered, ...waiting].forEach((a, i) => {
      if (!this.shows(a, openId)) return
      seen.add(a.id)
      let pin = this.buttons.get(a.id)
      if (!pin) {
        pin = h('button', { type: 'button', class: 'pin', onclick: () => this.clicked(a.id) })
        this.buttons.set(a.id, pin)
        this.element.appendChild(pin)
      }
      const q = openQuestionOf(a)
      const queued = isWaiting(a.id)
      setText(pin, queued ? '…' : String(i + 1))
      pin.toggleAttribute('data-waiting', queued)
      pin.setAttribute('data-status', a.status)
      pin.setAttribute('data-id', a.id)
      pin.toggleAttribute('data-agent', a.author === 'agent')
      if (q) pin.setAttribute('data-question', '')
      else pin.removeAttribute('data-question')
      pin.setAttribute('aria-expanded', String(openId === a.id))
      delete pin.dataset.anchor
      pin.dataset.n = queued ? '' : String(i + 1)
      pin.dataset.summary = `${queued ? 'Not sent yet (kept in this browser)' : STATUS_LABEL[a.status]}${a.author === 'agent' ? ' · filed by an agent' : ''}${q ? ' · question from the agent' : ''}\n${clip(a.comment, 140)}`
    })
    for (const [id, pin] of this.buttons) {
      if (!seen.has(id)) {
        pin.remove()
        this.buttons.delete(id)
        this.anchors.forget(id)
      }
    }
  }

  /** Pins on their elements now. Returns the box of `openId`'s pin when it shows. */
  position(ordered: readonly Annotation[], openId: string | undefined): Box | undefined {
    // Read once, and only with a pin to place: reading it lays the page out.
    if (ordered.length === 0) return undefined
    const vp = viewport()
    const placed: { x: number; y: number }[] = []
    let lost = 0
    let openPin: Box | undefined
    for (const a of ordered) {
      const pin = this.buttons.get(a.id)
      if (!pin) continue
      const anchor = this.anchor(a)
      this.label(pin, anchor.state)
      let at: { x: number; y: number } | undefined
      if (anchor.state === 'lost') {
        // Apart, in a row under the top edge: "not found", never on some other element.
        at = { x: vp.width - 40 - lost++ * 30, y: 30 }
      } else {
        at = this.pointOf(a, anchor, vp)
        if (!at) {
          pin.hidden = true
          continue
        }
        // Neighbours never overlap: move right until clear.
        for (let moved = true, tries = 0; moved && tries < 20; tries++) {
          moved = false
          for (const p of placed) {
            if (Math.abs(p.x - at.x) < PIN.size && Math.abs(p.y - at.y) < PIN.size) {
              at = { x: p.x + PIN.size + 2, y: at.y }
              moved = true
            }
          }
        }
        placed.push(at)
      }
      pin.hidden = false
      pin.style.left = `${at.x}px`
      pin.style.top = `${at.y}px`
      if (a.id === openId) openPin = { left: at.x + PIN.left, top: at.y + PIN.top, right: at.x + PIN.left + PIN.size, bottom: at.y + PIN.top + PIN.size }
    }
    return openPin
  }

  /** Where the pin's tip goes, or undefined while that point cannot be seen. */
  private pointOf(a: Annotation, anchor: Anchor, vp: { width: number; height: number }): { x: number; y: number } | undefined {
    const el = anchor.element
    if (!el) return undefined
    let x: number
    let y: number
    const words = anchor.range ? [...anchor.range.getClientRects()].filter((r) => r.width > 0) : []
    const r = viewRect(el)
    if (words.length > 0) {
      // At the end of the selected words.
      const last = words[words.length - 1]!
      const o = frameOffset(el.ownerDocument)
      x = last.right + o.x
      y = last.top + o.y + last.height / 2
    } else {
      if (r.width === 0 && r.height === 0) return undefined
      const at = a.element?.at
      if (at) {
        x = r.left + at.x * r.width
        y = r.top + at.y * r.height
      } else {
        // Inside the top-right corner: the pin reads as this element's, not the row above.
        x = Math.max(r.left, r.right - PIN.size - 3)
        y = r.top + Math.min(r.height, -PIN.top)
      }
    }
    const box = visibleBox(anchor.clip, vp)
    if (x < box.left || x > box.right || y < box.top || y > box.bottom) return undefined
    if (coveredAt(el, Math.min(Math.max(x, r.left + 1), r.right - 1), Math.min(Math.max(y, r.top + 1), r.bottom - 1), this.host)) return undefined
    return { x, y }
  }

  private label(pin: HTMLButtonElement, state: AnchorState): void {
    if (pin.dataset.anchor === state && pin.title) return
    pin.dataset.anchor = state
    const n = pin.dataset.n ?? ''
    const where = state === 'lost' ? ' · element not found: it moved or is gone' : state === 'moved' ? ' · found again where it moved' : ''
    const [status = '', comment = ''] = (pin.dataset.summary ?? '').split('\n')
    pin.setAttribute('aria-label', `Annotation${n ? ` ${n}` : ''}, ${status.toLowerCase()}${where}: ${comment}`)
    pin.title = `${n ? `#${n} · ` : ''}${status}${where}\n${comment}`
  }

  private anchor(a: Annotation): Anchor {
    const anchor = this.anchors.of(a)
    if (anchor.element) this.found(anchor)
    return anchor
  }

  /** The page element an annotation is about, if it is on the page now (and is the one annotated). */
  elementOf(a: Annotation): Element | null {
    return this.anchor(a).element
  }

  /** Look every element up again (the page may have rendered new ones). */
  forget(): void {
    this.anchors.forget()
  }
}
