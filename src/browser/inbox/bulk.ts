/**
 * The selection bar: how many annotations are selected, "Select all shown", and the actions on
 * the selection (resolve, dismiss, reopen, archive, delete, copy as Markdown). Built once and
 * updated in place, so the button the person pressed keeps the keyboard focus after the action.
 */
import { h, replace } from '../shared/dom.js'
import type { BulkAction } from '../shared/types.js'

export interface BulkEvents {
  run(action: BulkAction): void
  copy(): void
  selectAll(): void
  clear(): void
}

const LABEL: Record<BulkAction, string> = { resolve: 'Resolve', dismiss: 'Dismiss', reopen: 'Reopen', archive: 'Archive', delete: 'Delete' }
const ORDER: readonly BulkAction[] = ['resolve', 'dismiss', 'reopen', 'archive', 'delete']

export class BulkBar {
  private readonly count: HTMLElement
  private readonly buttons: HTMLButtonElement[]
  private readonly all: HTMLButtonElement
  private armed: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly element: HTMLElement,
    events: BulkEvents,
  ) {
    this.count = h('span', { class: 'bulk-count', role: 'status', 'aria-live': 'polite' })
    this.all = h('button', { type: 'button', class: 'btn', 'data-action': 'select-all', onclick: () => events.selectAll() }, 'Select all shown')
    const del = h('button', { type: 'button', class: 'btn danger', 'data-bulk': 'delete' }, 'Delete')
    del.addEventListener('click', () => {
      // Deleting asks twice, like a card's Delete.
      if (this.armed === undefined) {
        del.textContent = 'Confirm delete'
        del.classList.add('confirm')
        this.armed = setTimeout(() => this.disarm(del), 4_000)
        return
      }
      this.disarm(del)
      events.run('delete')
    })
    this.buttons = ORDER.map((action) => (action === 'delete' ? del : h('button', { type: 'button', class: 'btn', 'data-bulk': action, onclick: () => events.run(action) }, LABEL[action])))
    replace(
      element,
      this.count,
      this.all,
      h('button', { type: 'button', class: 'btn', 'data-action': 'clear-selection', onclick: () => events.clear() }, 'Clear'),
      h('span', { class: 'bulk-actions' }, ...this.buttons, h('button', { type: 'button', class: 'btn', 'data-bulk': 'copy', title: 'Copy the selection as Markdown', onclick: () => events.copy() }, 'Copy as Markdown')),
    )
  }

  /** Show the count (the bar hides with nothing selected); `busy` marks the bar while an action runs (buttons stay focusable: a disabled button would drop the focus). */
  render(selected: number, shown: number, busy = false): void {
    this.element.hidden = selected === 0
    this.count.textContent = `${selected} selected`
    this.all.hidden = selected >= shown
    this.element.setAttribute('aria-busy', String(busy))
    for (const b of this.buttons) b.setAttribute('aria-disabled', String(busy))
  }

  private disarm(del: HTMLButtonElement): void {
    clearTimeout(this.armed)
    this.armed = undefined
    del.textContent = 'Delete'
    del.classList.remove('confirm')
  }
}
