/**
 * One annotation as a card in the inbox: status, intent, severity and times; the comment; where
 * it is (selector, text, page); the selected words; the thread; Reply (or Answer), Reopen and
 * Delete. A card re-renders in place on a live change, keeping its reply box open, what is typed
 * in it and the keyboard focus.
 */
import { h } from '../shared/dom.js'
import { STATUS_LABEL, clip, openQuestionOf, shortUrl } from '../shared/format.js'
import { confirmButton, messageBox, messageForm, replyList, timeEl } from '../shared/thread.js'
import { sourceView } from '../shared/source.js'
import { attachmentStrip, pageContextView } from '../shared/attachments-view.js'
import type { Annotation } from '../shared/types.js'

export interface CardEvents {
  reply(id: string, message: string): void
  reopen(id: string): void
  remove(id: string): void
  /** The current copy of an annotation (a card re-renders from it). */
  get(id: string): Annotation | undefined
  /** Whether it belongs under the current filter (cards that no longer do are dimmed). */
  matches(a: Annotation): boolean
}

interface CardState {
  replyOpen: boolean
  replyText: string
}

export class Cards {
  private readonly state = new Map<string, CardState>()
  private readonly flashing = new Set<string>()

  constructor(
    private readonly list: HTMLElement,
    private readonly events: CardEvents,
  ) {}

  /** Its next render draws attention to it (it changed live). */
  flash(id: string): void {
    this.flashing.add(id)
  }

  /** Re-render a card in place; keyboard focus stays in it (on the same control when it still exists). */
  rerender(id: string): void {
    const old = this.list.querySelector(`article.card[data-id="${CSS.escape(id)}"]`)
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
    const state = this.state.get(a.id) ?? { replyOpen: false, replyText: '' }
    this.state.set(a.id, state)
    const question = openQuestionOf(a)
    const box = messageBox('Reply', question ? 'Answer the agent…' : 'Reply to the agent…', state.replyText, {
      'data-action': 'reply-text',
      oninput: (e: Event) => (state.replyText = (e.target as HTMLTextAreaElement).value),
    })
    const cancel = () => {
      state.replyOpen = false
      this.rerender(a.id)
    }
    const replyForm = messageForm(
      { class: 'reply-form', hidden: !state.replyOpen },
      box,
      h('div', { class: 'row' }, h('button', { type: 'button', class: 'btn', onclick: cancel }, 'Cancel'), h('button', { type: 'submit', class: 'btn primary' }, 'Send reply')),
      (message) => {
        state.replyText = ''
        state.replyOpen = false
        events.reply(a.id, message)
      },
    )
    const toggleReply = () => {
      state.replyOpen = !state.replyOpen
      this.rerender(a.id)
      if (state.replyOpen) this.list.querySelector<HTMLTextAreaElement>(`article.card[data-id="${CSS.escape(a.id)}"] textarea`)?.focus()
    }
    const when = [h('span', {}, 'created ', timeEl(a.createdAt))]
    if (a.status === 'resolved' || a.status === 'dismissed') when.push(h('span', {}, ` · ${a.status} `, timeEl(a.resolvedAt ?? a.updatedAt)))
    else if (a.updatedAt !== a.createdAt) when.push(h('span', {}, ' · updated ', timeEl(a.updatedAt)))
    const flash = this.flashing.delete(a.id)
    return h(
      'article',
      { class: `card${flash ? ' flash' : ''}${events.matches(a) ? '' : ' elsewhere'}`, 'data-id': a.id, 'data-status': a.status, 'aria-label': `${STATUS_LABEL[a.status]}: ${clip(a.comment, 80)}` },
      h(
        'div',
        { class: 'card-head' },
        h('span', { class: 'chip', 'data-status': a.status }, STATUS_LABEL[a.status]),
        a.intent ? h('span', { class: 'tag' }, a.intent) : null,
        a.severity ? h('span', { class: 'tag', 'data-severity': a.severity }, a.severity) : null,
        question ? h('span', { class: 'tag ask' }, 'Agent asks') : null,
        h('span', { class: 'when' }, ...when),
      ),
      h('p', { class: 'comment' }, a.comment),
      a.element || a.url || a.source
        ? h(
            'div',
            { class: 'where' },
            sourceView(a.source),
            a.element ? h('code', { title: a.element.path ?? a.element.selector }, clip(a.element.selector, 140)) : null,
            a.element?.text ? h('span', { class: 'snippet' }, `“${clip(a.element.text, 80)}”`) : null,
            a.url ? h('a', { href: a.url, target: '_blank', rel: 'noopener', class: 'page-link' }, shortUrl(a.url)) : null,
          )
        : null,
      a.selectedText ? h('blockquote', { class: 'selected' }, clip(a.selectedText, 400)) : null,
      attachmentStrip(a.attachments),
      pageContextView(a.context),
      replyList(a),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'btn', 'aria-expanded': String(state.replyOpen), 'data-action': 'reply', onclick: toggleReply }, question ? 'Answer' : 'Reply'),
        a.status === 'pending' ? null : h('button', { type: 'button', class: 'btn', 'data-action': 'reopen', onclick: () => events.reopen(a.id) }, 'Reopen'),
        h('span', { class: 'spacer' }),
        confirmButton('Delete', 'Confirm delete', () => events.remove(a.id), { 'data-action': 'delete' }),
      ),
      replyForm,
    )
  }
}
