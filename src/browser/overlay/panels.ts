/**
 * The overlay's two read-and-act panels, built from data and callbacks: an annotation's thread
 * (replies, the agent's open question, reply / reopen / delete) and the list of the page's
 * annotations (plus what waits in the outbox). The overlay decides when to show them and where.
 */
import { UnreachableError, describeError } from '../shared/api.js'
import { h } from '../shared/dom.js'
import { STATUS_LABEL, clip, fullTime, openQuestionOf, timeAgo } from '../shared/format.js'
import { LIMITS } from '../../store/vocabulary.js'
import type { OutboxItem } from './outbox.js'
import type { Annotation, Reply } from '../shared/types.js'

export interface ThreadActions {
  reply(message: string): Promise<void>
  /** Reopen; a typed reply goes with it. */
  reopen(message: string | undefined): Promise<void>
  remove(): Promise<void>
  close(): void
  /** A request failed because the server could not be reached. */
  unreachable(): void
}

/** A button that asks for a second click within 4 s before it acts. */
function confirmButton(label: string, confirmLabel: string, act: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'btn danger', ...attrs }, label)
  let armed: ReturnType<typeof setTimeout> | undefined
  button.addEventListener('click', () => {
    if (armed === undefined) {
      button.textContent = confirmLabel
      button.classList.add('confirm')
      armed = setTimeout(() => {
        armed = undefined
        button.textContent = label
        button.classList.remove('confirm')
      }, 4_000)
      return
    }
    clearTimeout(armed)
    armed = undefined
    act()
  })
  return button
}

/** Ctrl/Cmd+Enter in `textarea` submits `form`. */
export function submitOnCtrlEnter(textarea: HTMLTextAreaElement, form: HTMLFormElement): void {
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault()
      form.requestSubmit()
    }
  })
}

/** One reply; the agent's open question (not answered yet) stands out. */
export function replyItem(r: Reply, open: boolean): HTMLLIElement {
  const who = r.author === 'agent' ? (r.kind === 'question' ? (open ? 'The agent asks you' : 'Agent asked') : 'Agent') : 'You'
  return h(
    'li',
    { class: 'reply', 'data-author': r.author, 'data-kind': r.kind ?? 'message', 'data-open': open },
    h('div', { class: 'who' }, h('b', {}, who), h('time', { datetime: r.createdAt, title: fullTime(r.createdAt) }, timeAgo(r.createdAt))),
    h('p', {}, r.message),
  )
}

/**
 * The thread panel's content for annotation `a` (number `n`). `draft` is what the reply box held
 * before a re-render (live updates must not wipe what the person is typing).
 */
export function threadView(a: Annotation, n: number, draft: string, actions: ThreadActions): { nodes: Node[]; textarea: HTMLTextAreaElement } {
  const question = openQuestionOf(a)
  const error = h('div', { class: 'error', role: 'alert', hidden: true })
  const fail = (e: unknown) => {
    error.textContent = e instanceof UnreachableError ? `${e.message} Nothing was lost: try again when it is back.` : describeError(e)
    error.hidden = false
    if (e instanceof UnreachableError) actions.unreachable()
  }
  const textarea = h('textarea', { 'aria-label': question ? 'Answer the agent' : 'Reply', placeholder: question ? 'Answer the agent…' : 'Reply…', maxlength: LIMITS.message })
  textarea.value = draft
  const typed = () => {
    const message = textarea.value.trim()
    return message === '' ? undefined : clip(message, LIMITS.message)
  }
  const send = h('button', { type: 'submit', class: 'btn primary' }, question ? 'Answer' : 'Reply')
  const form = h(
    'form',
    {
      class: 'reply-form',
      onsubmit: async (e: Event) => {
        e.preventDefault()
        const message = typed()
        if (message === undefined) return
        send.disabled = true
        try {
          await actions.reply(message)
          textarea.value = ''
        } catch (err) {
          fail(err)
        } finally {
          send.disabled = false
        }
      },
    },
    textarea,
    h('div', { class: 'row' }, h('span', { class: 'hint' }, 'Ctrl+Enter to send'), h('span', { class: 'spacer' }), send),
  )
  submitOnCtrlEnter(textarea, form)

  const reopen =
    a.status === 'pending'
      ? null
      : h(
          'button',
          {
            type: 'button',
            class: 'btn',
            title: 'Send it back to the agent (a typed reply goes with it)',
            onclick: async () => {
              try {
                await actions.reopen(typed())
                textarea.value = ''
              } catch (err) {
                fail(err)
              }
            },
          },
          'Reopen',
        )
  const remove = confirmButton('Delete', 'Confirm delete', () => actions.remove().catch(fail))

  const nodes = [
    h(
      'div',
      { class: 'panel-head' },
      h('span', { class: 'num', 'data-status': a.status, 'aria-hidden': 'true' }, n),
      h('div', { class: 'panel-title', id: 'mg-thread-title' }, `Annotation #${n}`),
      h('span', { class: 'chip', 'data-status': a.status }, STATUS_LABEL[a.status]),
      h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', title: 'Close (Esc)', onclick: () => actions.close() }, '×'),
    ),
    h(
      'div',
      { class: 'panel-body' },
      h('p', { class: 'comment' }, a.comment),
      h(
        'div',
        { class: 'tags' },
        a.intent ? h('span', { class: 'tag' }, a.intent) : null,
        a.severity ? h('span', { class: 'tag', 'data-severity': a.severity }, a.severity) : null,
        h('span', { class: 'meta' }, h('time', { datetime: a.createdAt, title: fullTime(a.createdAt) }, timeAgo(a.createdAt))),
      ),
      a.element ? h('div', { class: 'meta' }, h('span', { class: 'mono', title: a.element.path ?? '' }, clip(a.element.selector, 160))) : null,
      a.selectedText ? h('blockquote', { class: 'selected' }, clip(a.selectedText, 400)) : null,
      a.replies.length === 0
        ? h('div', { class: 'empty' }, a.status === 'pending' ? 'No replies yet. The agent will answer here.' : 'No replies.')
        : h('ol', { class: 'replies', 'aria-label': 'Replies' }, ...a.replies.map((r) => replyItem(r, r === question))),
      form,
      error,
    ),
    h('div', { class: 'panel-foot' }, reopen, h('span', { class: 'spacer' }), remove),
  ]
  return { nodes, textarea }
}

export interface ListActions {
  open(id: string): void
  close(): void
  discard(item: OutboxItem): void
  retry(): void
  /** Whether the annotation's element is on the page now. */
  onPage(a: Annotation): boolean
}

/** The list panel's content: what waits in the outbox, then the page's annotations in pin order. */
export function listView(ordered: Annotation[], waiting: OutboxItem[], inboxUrl: string, actions: ListActions): Node[] {
  const items = ordered.map((a, i) => {
    const q = openQuestionOf(a)
    const replies = a.replies.length ? ` · ${a.replies.length} repl${a.replies.length === 1 ? 'y' : 'ies'}` : ''
    return h(
      'li',
      {},
      h(
        'button',
        { type: 'button', class: 'item', onclick: () => actions.open(a.id) },
        h('span', { class: 'num', 'data-status': a.status }, i + 1),
        h(
          'span',
          { class: 'text' },
          h('span', { class: 'line' }, a.comment),
          h('span', { class: 'meta line' }, `${STATUS_LABEL[a.status]} · ${timeAgo(a.createdAt)}${replies}${q ? ' · the agent asks you something' : ''}${actions.onPage(a) ? '' : ' · element not on the page now'}`),
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
          ? confirmButton('Discard', 'Confirm discard', () => actions.discard(item))
          : h('button', { type: 'button', class: 'btn', onclick: () => actions.retry() }, 'Retry now'),
      ),
    ),
  )
  return [
    h(
      'div',
      { class: 'panel-head' },
      h('div', { class: 'panel-title' }, `This page · ${ordered.length} annotation${ordered.length === 1 ? '' : 's'}`),
      h('a', { class: 'btn', href: `${inboxUrl}/`, target: '_blank', rel: 'noopener' }, 'Inbox'),
      h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', onclick: () => actions.close() }, '×'),
    ),
    h(
      'div',
      { class: 'panel-body' },
      kept.length ? h('ul', { class: 'list', 'aria-label': 'Kept in this browser' }, ...kept) : null,
      items.length ? h('ul', { class: 'list' }, ...items) : h('div', { class: 'empty' }, 'No annotations on this page yet. Press Annotate (Alt+Shift+A) and click something.'),
    ),
  ]
}
