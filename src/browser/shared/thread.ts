/**
 * The pieces of a conversation both pages show — the overlay's thread panel and the inbox's cards:
 * the reply list (the agent's open question stands out), a message box whose form sends on
 * Ctrl/Cmd+Enter and never sends an empty message, and a delete button that asks twice.
 */
import { LIMITS } from '../../store/vocabulary.js'
import { h, type Attrs, type Child } from './dom.js'
import { clip, fullTime, openQuestionOf, timeAgo } from './format.js'
import type { Annotation, Attachment, Reply } from './types.js'
import { attachmentStrip, beforeAfter } from './attachments-view.js'

/** A `<time>` that says "5 min ago", with the full local time as its tooltip. */
export function timeEl(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: fullTime(iso) }, timeAgo(iso))
}

/** Who wrote a reply, in the person's words. */
function author(r: Reply, open: boolean): string {
  // A team server names who wrote it; local use has only "you" and "the agent".
  const name = r.by?.name
  // Written in the inbox app of the agent's host, on the agent's connection: not the person's own word.
  if (r.via === 'host') return `${name ?? 'Agent'}, through its host's inbox app`
  if (r.author === 'human') return name ?? 'You'
  if (r.kind !== 'question') return name ?? 'Agent'
  return open ? `${name ?? 'The agent'} asks you` : `${name ?? 'Agent'} asked`
}

/** One reply; `open` marks the agent's question the person has not answered yet; an "after" picture stands beside `before`. */
function replyItem(r: Reply, open: boolean, attachments: string, before: Attachment | undefined): HTMLLIElement {
  const after = r.attachments?.find((x) => x.kind === 'after')
  return h(
    'li',
    { class: 'reply', 'data-author': r.author, 'data-kind': r.kind ?? 'message', 'data-open': open, ...(r.via ? { 'data-via': r.via } : {}) },
    h('div', { class: 'who' }, h('b', {}, author(r, open)), timeEl(r.createdAt)),
    r.message === '' ? null : h('p', {}, r.message),
    after ? beforeAfter(before, after, attachments) : null,
    attachmentStrip(r.attachments?.filter((x) => x !== after), attachments),
  )
}

/** An annotation's replies, oldest first; null when there are none. */
export function replyList(a: Annotation, attachments: string): HTMLOListElement | null {
  if (a.replies.length === 0) return null
  const question = openQuestionOf(a)
  const before = a.attachments?.find((x) => x.kind === 'screenshot')
  return h('ol', { class: 'replies', 'aria-label': 'Replies' }, ...a.replies.map((r) => replyItem(r, r === question, attachments, before)))
}

/** A text box for a reply, cut at the store's message limit. */
export function messageBox(label: string, placeholder: string, value = '', attrs: Attrs = {}): HTMLTextAreaElement {
  const box = h('textarea', { 'aria-label': label, placeholder, maxlength: LIMITS.message, ...attrs })
  box.value = value
  return box
}

/** What the box holds, trimmed and within the limit; undefined when there is nothing to send. */
export function typedMessage(box: HTMLTextAreaElement): string | undefined {
  const message = box.value.trim()
  return message === '' ? undefined : clip(message, LIMITS.message)
}

/**
 * A form around `box` and `controls`: its submit (a button, or Ctrl/Cmd+Enter in the box) hands
 * `send` the typed message; an empty box sends nothing.
 */
export function messageForm(attrs: Attrs, box: HTMLTextAreaElement, controls: Child, send: (message: string) => void | Promise<void>): HTMLFormElement {
  const form = h(
    'form',
    {
      ...attrs,
      onsubmit: (e: Event) => {
        e.preventDefault()
        const message = typedMessage(box)
        if (message !== undefined) void send(message)
      },
    },
    box,
    controls,
  )
  submitOnCtrlEnter(box, form)
  return form
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

/** A button that asks for a second click within 4 s before it acts. */
export function confirmButton(label: string, confirmLabel: string, act: () => void, attrs: Attrs = {}): HTMLButtonElement {
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
