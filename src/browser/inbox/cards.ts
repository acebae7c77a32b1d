/**
 * One annotation as a card in the inbox: a checkbox to select it, status, intent, severity and
 * times ("New" when it arrived live); the comment (a long one collapsed behind "Show more");
 * where it is (the element as a person names it, the source, the page); the selected words; the
 * thread; Reply (or Answer, with pasted images), Reopen, Copy as Markdown and Delete. A card
 * re-renders in place on a live change, keeping its reply box open, what is typed in it, its
 * pasted images and the keyboard focus. Esc in the reply box closes it.
 */
import { h } from '../shared/dom.js'
import { STATUS_LABEL, clip, openQuestionOf } from '../shared/format.js'
import { elementName } from '../shared/markdown.js'
import { confirmButton, messageBox, messageForm, replyList, timeEl } from '../shared/thread.js'
import { sourceView } from '../shared/source.js'
import { attachmentStrip, pageContextView, stepsView } from '../shared/attachments-view.js'
import { ImageTray } from '../shared/image-tray.js'
import { pageLink, type Links } from '../shared/links.js'
import type { Annotation } from '../shared/types.js'

export interface CardEvents {
  /** Send a reply with the pasted images; rejects when it failed (the box keeps the text). */
  reply(id: string, message: string, images: File[]): Promise<void>
  reopen(id: string): void
  remove(id: string): void
  copy(id: string): void
  /** The person selected or unselected it. */
  select(id: string, on: boolean): void
  selected(id: string): boolean
  /** It arrived live and the person has not looked at it yet. */
  isNew(id: string): boolean
  /** The person looked at it (clicked or focused into it). */
  seen(id: string): void
  /** The current copy of an annotation (a card re-renders from it). */
  get(id: string): Annotation | undefined
  /** Whether it belongs in the current view (cards that no longer do are dimmed). */
  matches(a: Annotation): boolean
  refused(message: string): void
}

interface CardState {
  replyOpen: boolean
  replyText: string
  expanded: boolean
  tray?: ImageTray
}

/** Comments longer than this (characters or lines) start collapsed. */
const LONG_CHARS = 600
const LONG_LINES = 8

function isLong(text: string): boolean {
  return text.length > LONG_CHARS || text.split('\n').length > LONG_LINES
}

export class Cards {
  private readonly state = new Map<string, CardState>()
  private readonly flashing = new Set<string>()

  constructor(
    private readonly list: HTMLElement,
    private readonly events: CardEvents,
    /** Where images and source links point. */
    private readonly links: Links,
  ) {}

  /** Its next render draws attention to it (it changed live). */
  flash(id: string): void {
    this.flashing.add(id)
  }

  element(id: string): HTMLElement | null {
    return this.list.querySelector<HTMLElement>(`article.card[data-id="${CSS.escape(id)}"]`)
  }

  /** Re-render a card in place; keyboard focus stays in it (on the same control when it still exists). */
  rerender(id: string): void {
    const old = this.element(id)
    const a = this.events.get(id)
    if (!old || !a) return
    const focused = document.activeElement instanceof HTMLElement && old.contains(document.activeElement) ? document.activeElement : undefined
    const action = focused?.dataset.action
    const fresh = this.card(a)
    old.replaceWith(fresh)
    if (focused) (fresh.querySelector<HTMLElement>(`[data-action="${action ?? ''}"]`) ?? fresh.querySelector<HTMLElement>('[data-action="reply"]'))?.focus()
  }

  card(a: Annotation): HTMLElement {
    const { events } = this
    const state = this.state.get(a.id) ?? { replyOpen: false, replyText: '', expanded: false }
    this.state.set(a.id, state)
    const question = openQuestionOf(a)
    const box = messageBox('Reply', question ? 'Answer the agent… (paste images here)' : 'Reply to the agent… (paste images here)', state.replyText, {
      'data-action': 'reply-text',
      oninput: (e: Event) => (state.replyText = (e.target as HTMLTextAreaElement).value),
    })
    state.tray ??= new ImageTray((message) => events.refused(message))
    const tray = state.tray
    tray.bind(box)
    const cancel = () => {
      state.replyOpen = false
      this.rerender(a.id)
      this.element(a.id)?.querySelector<HTMLElement>('[data-action="reply"]')?.focus()
    }
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault()
        cancel()
      }
    })
    const send = h('button', { type: 'submit', class: 'btn primary' }, 'Send reply')
    const replyForm = messageForm(
      { class: 'reply-form', hidden: !state.replyOpen },
      box,
      h('div', { class: 'row' }, tray.element, h('span', { class: 'hint' }, 'Ctrl+Enter to send · Esc to close'), h('span', { class: 'spacer' }), h('button', { type: 'button', class: 'btn', onclick: cancel }, 'Cancel'), send),
      async (message) => {
        send.disabled = true
        try {
          await events.reply(a.id, message, tray.images)
          state.replyText = ''
          state.replyOpen = false
          tray.clear()
          this.rerender(a.id)
          this.element(a.id)?.querySelector<HTMLElement>('[data-action="reply"]')?.focus()
        } catch {
          send.disabled = false
        }
      },
    )
    const toggleReply = () => {
      state.replyOpen = !state.replyOpen
      this.rerender(a.id)
      if (state.replyOpen) this.element(a.id)?.querySelector<HTMLTextAreaElement>('textarea')?.focus()
    }
    const when = [h('span', {}, 'created ', ...(a.by ? [h('span', { class: 'by' }, `by ${a.by.name} `)] : []), timeEl(a.createdAt))]
    if (a.status === 'resolved' || a.status === 'dismissed') when.push(h('span', {}, ` · ${a.status} `, timeEl(a.resolvedAt ?? a.updatedAt)))
    else if (a.updatedAt !== a.createdAt) when.push(h('span', {}, ' · updated ', timeEl(a.updatedAt)))
    const flash = this.flashing.delete(a.id)
    const isNew = events.isNew(a.id)
    const long = isLong(a.comment)
    const comment = h('p', { class: `comment${long && !state.expanded ? ' collapsed' : ''}` }, a.comment)
    const more = long
      ? h(
          'button',
          {
            type: 'button',
            class: 'link-btn',
            'data-action': 'expand',
            'aria-expanded': String(state.expanded),
            onclick: () => {
              state.expanded = !state.expanded
              this.rerender(a.id)
            },
          },
          state.expanded ? 'Show less' : `Show more (${a.comment.length.toLocaleString()} characters)`,
        )
      : null
    const name = a.element ? elementName(a.element) : undefined
    const card = h(
      'article',
      {
        class: `card${flash ? ' flash' : ''}${events.matches(a) ? '' : ' elsewhere'}${isNew ? ' new' : ''}${events.selected(a.id) ? ' selected' : ''}`,
        'data-id': a.id,
        'data-status': a.status,
        'aria-label': `${isNew ? 'New. ' : ''}${STATUS_LABEL[a.status]}: ${clip(a.comment, 80)}`,
      },
      h(
        'div',
        { class: 'card-head' },
        h('input', {
          type: 'checkbox',
          class: 'pick',
          'data-action': 'select',
          'aria-label': `Select: ${clip(a.comment, 60)}`,
          checked: events.selected(a.id),
          onchange: (e: Event) => events.select(a.id, (e.target as HTMLInputElement).checked),
        }),
        isNew ? h('span', { class: 'tag new-tag' }, 'New') : null,
        h('span', { class: 'chip', 'data-status': a.status }, STATUS_LABEL[a.status]),
        a.intent ? h('span', { class: 'tag' }, a.intent) : null,
        a.severity ? h('span', { class: 'tag', 'data-severity': a.severity }, a.severity) : null,
        question ? h('span', { class: 'tag ask' }, 'Agent asks') : null,
        h('span', { class: 'when' }, ...when),
      ),
      comment,
      more,
      a.element || a.url || a.source
        ? h(
            'div',
            { class: 'where' },
            name && name !== a.element?.selector ? h('span', { class: 'element-name' }, name) : null,
            sourceView(a.source, this.links.editor),
            a.element ? h('code', { title: a.element.path ?? a.element.selector }, clip(a.element.selector, 140)) : null,
            a.url ? pageLink(a.url, { class: 'page-link' }) : null,
          )
        : null,
      a.selectedText ? h('blockquote', { class: 'selected' }, clip(a.selectedText, 400)) : null,
      attachmentStrip(a.attachments, this.links.attachments),
      pageContextView(a.context),
      stepsView(a.steps),
      replyList(a, this.links.attachments),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'btn', 'aria-expanded': String(state.replyOpen), 'data-action': 'reply', onclick: toggleReply }, question ? 'Answer' : 'Reply'),
        a.status === 'pending' ? null : h('button', { type: 'button', class: 'btn', 'data-action': 'reopen', onclick: () => events.reopen(a.id) }, 'Reopen'),
        h('button', { type: 'button', class: 'btn', 'data-action': 'copy', title: 'Copy as Markdown', onclick: () => events.copy(a.id) }, 'Copy'),
        h('span', { class: 'spacer' }),
        confirmButton('Delete', 'Confirm delete', () => events.remove(a.id), { 'data-action': 'delete' }),
      ),
      replyForm,
    )
    // Long replies collapse too.
    for (const p of card.querySelectorAll<HTMLElement>('.reply > p')) if (isLong(p.textContent ?? '')) collapse(p)
    if (isNew) {
      const seen = () => events.seen(a.id)
      card.addEventListener('pointerdown', seen, { once: true })
      card.addEventListener('focusin', seen, { once: true })
    }
    return card
  }
}

/** Collapse a long paragraph behind a "Show more" button (state kept by the element only). */
function collapse(p: HTMLElement): void {
  p.classList.add('collapsed')
  const button = h('button', { type: 'button', class: 'link-btn', 'aria-expanded': 'false' }, 'Show more')
  button.addEventListener('click', () => {
    const open = p.classList.toggle('collapsed') === false
    button.setAttribute('aria-expanded', String(open))
    button.textContent = open ? 'Show less' : 'Show more'
  })
  p.after(button)
}
