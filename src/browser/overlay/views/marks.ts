/**
 * Marks drawn over the page: the highlight on the element under the pointer in annotate mode
 * (named as a person would, with its size), dashed outlines on what the open box or thread is
 * about (every element of it), the selected words of an open thread, and the area being dragged.
 */
import { h, replace } from '../../shared/dom.js'
import { viewRect } from '../anchor/dom.js'
import { humanName } from '../anchor/names.js'

export class Marks {
  private readonly label = h('span', { class: 'label' })
  readonly highlight = h('div', { class: 'highlight', hidden: true }, this.label)
  readonly outline = h('div', { class: 'outlines' })
  readonly words = h('div', { class: 'words' })
  readonly band = h('div', { class: 'band', hidden: true })

  /** Highlight `el`, or nothing; `hint` follows its name (by default, how to walk to the parent). */
  hover(el: Element | undefined, hint = '  ↑↓ parent'): void {
    this.highlight.hidden = el === undefined
    if (!el) return
    const r = viewRect(el)
    frame(this.highlight, r, 2)
    this.highlight.classList.toggle('below', r.top < 28)
    this.label.textContent = `${humanName(el)}  ${Math.round(r.width)}×${Math.round(r.height)}${hint}`
  }

  /** Outline each of `rects`, or nothing. */
  outlineAround(rects: readonly DOMRect[] | DOMRect | undefined): void {
    const list = rects === undefined ? [] : 'length' in rects ? rects : [rects]
    replace(this.outline, ...list.map((r) => frame(h('div', { class: 'target-outline' }), r, 3)))
  }

  /** Mark the selected words (their client rects in the overlay's viewport), or nothing. */
  mark(rects: readonly DOMRect[]): void {
    replace(this.words, ...rects.map((r) => frame(h('div', { class: 'word' }), r, 0)))
  }

  /** The area being dragged, or nothing. */
  drag(r: DOMRect | undefined): void {
    this.band.hidden = r === undefined
    if (r) frame(this.band, r, 0)
  }
}

/** Put `el` around `r`, `gap` pixels outside it. */
function frame(el: HTMLElement, r: DOMRect, gap: number): HTMLElement {
  el.style.left = `${r.left - gap}px`
  el.style.top = `${r.top - gap}px`
  el.style.width = `${r.width + 2 * gap}px`
  el.style.height = `${r.height + 2 * gap}px`
  return el
}
