/**
 * Long comments and replies fold to a few lines in the thread, with "Show more" and
 * "Show less"; what the person unfolded stays unfolded across live re-renders.
 */
import { h } from '../../shared/dom.js'

/** Longer than this (characters or lines), a text folds. */
const FOLD_CHARS = 600
const FOLD_LINES = 8

function isLong(text: string): boolean {
  return text.length > FOLD_CHARS || text.split('\n').length > FOLD_LINES
}

/**
 * `p` (already holding `text`) folded when the text is long, with its toggle after it. `open`
 * keeps the keys of unfolded texts; `key` names this one.
 */
export function foldable(p: HTMLElement, text: string, key: string, open: Set<string>): HTMLElement {
  if (!isLong(text)) return p
  const fold = (folded: boolean) => {
    p.classList.toggle('folded', folded)
    button.textContent = folded ? `Show more (${text.length.toLocaleString('en')} characters)` : 'Show less'
    button.setAttribute('aria-expanded', String(!folded))
  }
  const button = h('button', {
    type: 'button',
    class: 'more',
    onclick: () => {
      const folded = !p.classList.contains('folded')
      if (folded) open.delete(key)
      else open.add(key)
      fold(folded)
    },
  })
  fold(!open.has(key))
  return h('div', { class: 'foldable' }, p, button)
}

/** The counter shows from this share of the limit on. */
const NEAR = 0.9
const fmt = (n: number) => n.toLocaleString('en').replace(/,/g, ' ')

export interface CharCounter {
  readonly element: HTMLSpanElement
  /** Redraw (after the box's value was set by code). */
  update(): void
  /** Why the text cannot be sent as it is; undefined when it fits. */
  problem(): string | undefined
}

/**
 * A counter for `box` near `limit` ("9 412 / 10 000"), red past it. The box itself has no
 * maxlength: a pasted text past the limit stays whole, and the person is told, not cut silently.
 */
export function charCounter(box: HTMLTextAreaElement, limit: number, what = 'comment'): CharCounter {
  const element = h('span', { class: 'chars', 'aria-live': 'polite', hidden: true })
  const update = () => {
    const n = box.value.trim().length
    element.hidden = n < limit * NEAR
    element.classList.toggle('over', n > limit)
    element.textContent = n > limit ? `${fmt(n)} / ${fmt(limit)}: ${fmt(n - limit)} too many` : `${fmt(n)} / ${fmt(limit)}`
  }
  box.addEventListener('input', update)
  return {
    element,
    update,
    problem: () => {
      const n = box.value.trim().length
      return n > limit ? `This ${what} is ${fmt(n)} characters; the limit is ${fmt(limit)}. Shorten it by ${fmt(n - limit)} characters to send it.` : undefined
    },
  }
}
