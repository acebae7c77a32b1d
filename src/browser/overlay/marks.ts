/**
 * Marks drawn over the page: the highlight on the element under the pointer in annotate mode
 * (with its tag, id, classes and size), and a dashed outline on what the open box or thread is
 * about.
 */
import { h } from '../shared/dom.js'

export class Marks {
  private readonly label = h('span', { class: 'label' })
  readonly highlight = h('div', { class: 'highlight', hidden: true }, this.label)
  readonly outline = h('div', { class: 'target-outline', hidden: true })

  /** Highlight `el`, or nothing. */
  hover(el: Element | undefined): void {
    this.highlight.hidden = el === undefined
    if (!el) return
    const r = el.getBoundingClientRect()
    frame(this.highlight, r, 2)
    this.highlight.classList.toggle('below', r.top < 28)
    const id = el.id ? `#${el.id}` : ''
    const cls = [...el.classList].slice(0, 2).map((c) => `.${c}`).join('')
    this.label.textContent = `${el.localName}${id}${cls}  ${Math.round(r.width)}×${Math.round(r.height)}`
  }

  /** Outline `r`, or nothing. */
  outlineAround(r: DOMRect | undefined): void {
    this.outline.hidden = r === undefined
    if (r) frame(this.outline, r, 3)
  }
}

/** Put `el` around `r`, `gap` pixels outside it. */
function frame(el: HTMLElement, r: DOMRect, gap: number): void {
  el.style.left = `${r.left - gap}px`
  el.style.top = `${r.top - gap}px`
  el.style.width = `${r.width + 2 * gap}px`
  el.style.height = `${r.height + 2 * gap}px`
}
