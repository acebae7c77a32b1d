/**
 * The steps to reproduce in the composer: what the person did since the page loaded (or since
 * their last annotation), one line each as the agent will read them, before anything is sent.
 * Each step has its × (drop it), and "Drop all" sends none. What is left goes with the annotation.
 */
import { stepLines } from '../../../store/steps.js'
import { h, replace } from '../../shared/dom.js'
import type { Step } from '../../shared/types.js'

export class StepList {
  readonly element: HTMLDetailsElement
  private readonly summary: HTMLElement
  private readonly list: HTMLOListElement
  private readonly dropAll: HTMLButtonElement
  private steps: Step[] = []

  constructor() {
    this.summary = h('summary', {})
    this.list = h('ol', { class: 'step-list', 'aria-label': 'Steps to reproduce' })
    this.dropAll = h('button', { type: 'button', class: 'btn link', onclick: () => this.set([]) }, 'Drop all')
    this.element = h('details', { class: 'steps', open: true, hidden: true }, this.summary, this.list, h('div', { class: 'step-foot' }, this.dropAll))
  }

  /** Show `steps` (the recorder's, as the box opens). */
  set(steps: readonly Step[]): void {
    this.steps = [...steps]
    this.render()
  }

  /** The steps still there, oldest first. */
  kept(): Step[] {
    return [...this.steps]
  }

  private drop(index: number): void {
    this.steps.splice(index, 1)
    this.render()
    ;(this.list.querySelector<HTMLButtonElement>(`li:nth-child(${Math.min(index + 1, this.steps.length)}) button`) ?? this.dropAll).focus()
  }

  private render(): void {
    const n = this.steps.length
    this.element.hidden = n === 0
    this.summary.textContent = `Steps to reproduce (${n})`
    const lines = stepLines(this.steps)
    replace(
      this.list,
      ...lines.map((line, i) =>
        h(
          'li',
          {},
          h('span', { class: 'step-text', title: line }, line),
          h('button', { type: 'button', class: 'icon-btn', 'aria-label': `Drop step ${i + 1}`, title: 'Leave this step out', onclick: () => this.drop(i) }, '×'),
        ),
      ),
    )
  }
}
