/**
 * The list panel (the toolbar's count): what waits in this browser's outbox, then the page's
 * annotations in pin order, each opening its thread.
 */
import { h, replace } from '../../shared/dom.js'
import { STATUS_LABEL, openQuestionOf, timeAgo } from '../../shared/format.js'
import { confirmButton } from '../../shared/thread.js'
import type { Annotation } from '../../shared/types.js'
import type { OutboxItem } from '../sync/outbox.js'
import { coarsePointer, placePanel } from './layout.js'

export interface ListEvents {
  open(id: string): void
  close(): void
  discard(item: OutboxItem): void
  retry(): void
  /** Whether the annotation's element is on the page now. */
  onPage(a: Annotation): boolean
  /** "Copy as Markdown": all of the page's annotations. */
  copyAll?(): void
}

export class ListPanel {
  readonly element = h('section', { class: 'panel list-panel', role: 'dialog', 'aria-label': 'Annotations on this page', hidden: true, tabindex: -1 })

  constructor(
    /** The inbox's address, for its link. */
    private readonly server: string,
    private readonly events: ListEvents,
    /** The annotate shortcut, as the empty list tells it. */
    private readonly shortcut = 'Alt+Shift+A',
  ) {}

  /** Above the dock (`reserve` pixels high), at the bottom right of what is on screen. */
  place(reserve: number): void {
    placePanel(this.element, undefined, reserve)
  }

  get isOpen(): boolean {
    return !this.element.hidden
  }

  open(): void {
    this.element.hidden = false
  }

  close(): void {
    this.element.hidden = true
    replace(this.element)
  }

  render(ordered: readonly Annotation[], waiting: readonly OutboxItem[]): void {
    if (!this.isOpen) return
    const { events } = this
    const items = ordered.map((a, i) => {
      const q = openQuestionOf(a)
      const replies = a.replies.length ? ` · ${a.replies.length} repl${a.replies.length === 1 ? 'y' : 'ies'}` : ''
      return h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'item', onclick: () => events.open(a.id) },
          h('span', { class: 'num', 'data-status': a.status }, i + 1),
          h(
            'span',
            { class: 'text' },
            h('span', { class: 'line' }, a.comment),
            h('span', { class: 'meta line' }, `${STATUS_LABEL[a.status]} · ${timeAgo(a.createdAt)}${replies}${q ? ' · the agent asks you something' : ''}${events.onPage(a) ? '' : ' · element moved or not found'}`),
          ),
        ),
      )
    })
    const kept = waiting.map((item) =>
      h(
        'li',
        { class: 'outbox-item' },
        h('span', { class: 'line' }, item.body.comment),
        h('span', { class: 'meta' }, item.rejected ? `Not sent: ${item.rejected}` : `Waiting to be sent${item.lastError ? ` (${item.lastError})` : ''}`),
        h(
          'div',
          { class: 'row' },
          item.rejected
            ? confirmButton('Discard', 'Confirm discard', () => events.discard(item))
            : h('button', { type: 'button', class: 'btn', onclick: () => events.retry() }, 'Retry now'),
        ),
      ),
    )
    replace(
      this.element,
      h(
        'div',
        { class: 'panel-head' },
        h('div', { class: 'panel-title' }, `This page · ${ordered.length} annotation${ordered.length === 1 ? '' : 's'}`),
        events.copyAll && ordered.length > 0 ? h('button', { type: 'button', class: 'btn copy-md', title: "Copy all of this page's annotations as Markdown", onclick: () => events.copyAll?.() }, 'Copy all') : null,
        h('a', { class: 'btn', href: `${this.server}/`, target: '_blank', rel: 'noopener' }, 'Inbox'),
        h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', onclick: () => events.close() }, '×'),
      ),
      h(
        'div',
        { class: 'panel-body' },
        kept.length ? h('ul', { class: 'list', 'aria-label': 'Kept in this browser' }, ...kept) : null,
        items.length ? h('ul', { class: 'list' }, ...items) : kept.length ? null : h('div', { class: 'empty' }, coarsePointer() ? 'No annotations on this page yet. Tap Annotate, then tap something.' : `No annotations on this page yet. Press Annotate (${this.shortcut}) and click something.`),
      ),
    )
  }
}
