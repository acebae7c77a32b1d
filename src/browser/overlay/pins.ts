/**
 * Pin placement: one numbered pin per annotation of the page, on its element, in its status
 * colour, with the agent's open question marked. It finds each annotation's element from its
 * selector (remembered until `forget`, since elements come and go on client-rendered pages) and
 * hides the pin while the element is gone, empty or off-screen.
 */
import { h } from '../shared/dom.js'
import { STATUS_LABEL, clip, openQuestionOf } from '../shared/format.js'
import type { Annotation } from '../shared/types.js'
import { viewport, type Box } from './layout.js'

export class Pins {
  readonly element = h('div', { class: 'pins' })
  private readonly buttons = new Map<string, HTMLButtonElement>()
  private readonly found = new Map<string, Element | null>()

  constructor(
    /** The overlay's own host: never an annotation's element. */
    private readonly host: HTMLElement,
    /** A pin was clicked. */
    private readonly clicked: (id: string) => void,
  ) {}

  /** One pin per annotation, numbered in `ordered`'s order; pins of annotations gone are removed. */
  render(ordered: readonly Annotation[], openId: string | undefined): void {
    const seen = new Set<string>()
    ordered.forEach((a, i) => {
      seen.add(a.id)
      let pin = this.buttons.get(a.id)
      if (!pin) {
        pin = h('button', { type: 'button', class: 'pin', onclick: () => this.clicked(a.id) })
        this.buttons.set(a.id, pin)
        this.element.appendChild(pin)
      }
      const q = openQuestionOf(a)
      pin.textContent = String(i + 1)
      pin.setAttribute('data-status', a.status)
      pin.setAttribute('data-id', a.id)
      if (q) pin.setAttribute('data-question', '')
      else pin.removeAttribute('data-question')
      pin.setAttribute('aria-expanded', String(openId === a.id))
      pin.setAttribute('aria-label', `Annotation ${i + 1}, ${STATUS_LABEL[a.status].toLowerCase()}${q ? ', the agent asks a question' : ''}: ${clip(a.comment, 80)}`)
      pin.title = `#${i + 1} · ${STATUS_LABEL[a.status]}${q ? ' · question from the agent' : ''}\n${clip(a.comment, 140)}`
    })
    for (const [id, pin] of this.buttons) {
      if (!seen.has(id)) {
        pin.remove()
        this.buttons.delete(id)
        this.found.delete(id)
      }
    }
  }

  /** Pins on their elements now. Returns the box of `openId`'s pin when it shows. */
  position(ordered: readonly Annotation[], openId: string | undefined): Box | undefined {
    const { width: vw, height: vh } = viewport()
    const perElement = new Map<Element, number>()
    let openPin: Box | undefined
    for (const a of ordered) {
      const pin = this.buttons.get(a.id)
      if (!pin) continue
      const el = this.elementOf(a)
      const r = el?.getBoundingClientRect()
      if (!el || !r || (r.width === 0 && r.height === 0) || r.bottom < 0 || r.top > vh || r.right < 0 || r.left > vw) {
        pin.hidden = true
        continue
      }
      const k = perElement.get(el) ?? 0
      perElement.set(el, k + 1)
      // The pin's tip on the element's top-right corner, its body just outside it.
      const x = Math.max(8, Math.min(r.right - 2 - k * 30, vw - 30))
      const y = Math.max(26, Math.min(r.top + 2, vh - 4))
      pin.hidden = false
      pin.style.left = `${x}px`
      pin.style.top = `${y}px`
      if (a.id === openId) openPin = { left: x - 4, top: y - 22, right: x + 22, bottom: y + 4 }
    }
    return openPin
  }

  /** The page element an annotation is about, if it is on the page now. */
  elementOf(a: Annotation): Element | null {
    if (this.found.has(a.id)) {
      const cached = this.found.get(a.id) ?? null
      if (!cached || cached.isConnected) return cached
    }
    let el: Element | null = null
    const selector = a.element?.selector
    if (selector) {
      try {
        el = document.querySelector(selector)
      } catch {
        el = null
      }
    }
    if (el && (el === this.host || this.host.contains(el))) el = null
    this.found.set(a.id, el)
    return el
  }

  /** Look every element up again (the page may have rendered new ones). */
  forget(): void {
    this.found.clear()
  }
}
