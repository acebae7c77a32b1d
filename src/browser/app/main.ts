/**
 * The triage inbox as an MCP App: rendered by the agent's host in its sandbox, it reads and
 * writes only through the host bridge. It lists with list_sessions and get_session, filters in
 * the page, and writes with the app's own tools (inbox_reply, inbox_set_status). What it writes
 * travels on the agent's connection, so the server records it as through the agent's host, never
 * as the person's answer to a question: the page says where that answer is given (the inbox or the
 * overlay). No fetch, no external asset: everything is in this one document.
 */
import { App, PostMessageTransport, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps'
import { h, replace } from '../shared/dom.js'
import { STATUS_LABEL, byCreation, openQuestionOf, shortUrl, timeAgo } from '../shared/format.js'
import { messageBox, typedMessage } from '../shared/thread.js'
import type { Annotation, AnnotationStatus, Reply, Session } from '../shared/types.js'
import css from './app.css'

/** Which annotations the list shows: a status, those asking the person, those needing attention, or all. */
type StatusFilter = AnnotationStatus | 'open' | 'question' | 'all'

interface ToolText {
  type: string
  text?: string
}

/** Annotations per session read at once (get_session's largest page). */
const PAGE = 500

class InboxApp {
  private sessions: Session[] = []
  private annotations: Annotation[] = []
  private readonly status = byId<HTMLSelectElement>('status')
  private readonly session = byId<HTMLSelectElement>('session')
  private readonly search = byId<HTMLInputElement>('search')
  private readonly cards = byId<HTMLUListElement>('cards')
  private readonly count = byId<HTMLDivElement>('count')
  private readonly error = byId<HTMLDivElement>('error')

  constructor(private readonly app: App) {
    for (const input of [this.status, this.session]) input.addEventListener('change', () => this.render())
    this.search.addEventListener('input', () => this.render())
    byId<HTMLButtonElement>('refresh').addEventListener('click', () => void this.load())
  }

  /** A tool's structured result; a failed call throws its message. */
  private async call<T>(name: string, args: Record<string, unknown>): Promise<T> {
    const result = await this.app.callServerTool({ name, arguments: args })
    if (result.isError) throw new Error(((result.content ?? []) as ToolText[]).map((c) => c.text ?? '').join(' ') || `${name} failed`)
    return result.structuredContent as T
  }

  /** Every session and its annotations (full records: the thread is shown), oldest first. */
  async load(): Promise<void> {
    try {
      const { sessions } = await this.call<{ sessions: Session[] }>('list_sessions', {})
      const pages = await Promise.all(sessions.map((s) => this.call<{ annotations: Annotation[] }>('get_session', { id: s.id, detail: 'full', limit: PAGE })))
      this.sessions = sessions
      this.annotations = pages.flatMap((p) => p.annotations).sort(byCreation)
      this.error.textContent = ''
    } catch (e) {
      this.error.textContent = `Could not load the inbox: ${e instanceof Error ? e.message : String(e)}`
    }
    this.renderSessions()
    this.render()
  }

  private renderSessions(): void {
    const chosen = this.session.value
    replace(this.session, h('option', { value: '' }, 'Every page'), ...this.sessions.map((s) => h('option', { value: s.id }, s.name ?? shortUrl(s.url))))
    this.session.value = this.sessions.some((s) => s.id === chosen) ? chosen : ''
  }

  private shown(): Annotation[] {
    const status = this.status.value as StatusFilter
    const sessionId = this.session.value
    const text = this.search.value.trim().toLowerCase()
    return this.annotations.filter(
      (a) =>
        (sessionId === '' || a.sessionId === sessionId) &&
        (status === 'all' ||
          (status === 'open' ? a.status === 'pending' || a.status === 'acknowledged' || openQuestionOf(a) !== undefined : status === 'question' ? openQuestionOf(a) !== undefined : a.status === status)) &&
        (text === '' || [a.comment, a.url ?? '', ...a.replies.map((r) => r.message)].some((t) => t.toLowerCase().includes(text))),
    )
  }

  private render(): void {
    const shown = this.shown()
    this.count.textContent = `${shown.length} of ${this.annotations.length} annotation${this.annotations.length === 1 ? '' : 's'}`
    replace(this.cards, ...(shown.length > 0 ? shown.map((a) => this.card(a)) : [h('li', { class: 'empty' }, 'Nothing here.')]))
  }

  private card(a: Annotation): HTMLLIElement {
    const question = openQuestionOf(a)
    // A reply from here is not the person's answer (see above): a question is answered in the inbox or on the page.
    const box = messageBox('Reply', question ? 'Reply (answer the question in the inbox or on the page)…' : 'Reply…')
    const controls: HTMLButtonElement[] = []
    // No <form>: a host's sandbox may not allow form submission. A click or Ctrl/Cmd+Enter sends.
    const reply = () => {
      const message = typedMessage(box)
      if (message !== undefined) void this.act(controls, () => this.call('inbox_reply', { id: a.id, message }))
    }
    const send = h('button', { type: 'button', class: 'primary', 'data-action': 'reply', onclick: reply }, 'Send')
    controls.push(send)
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault()
        reply()
      }
    })
    const form = h('div', { class: 'answer' }, box, send)
    const action = (name: 'reopen' | 'resolve' | 'dismiss', label: string) => {
      const button = h('button', { type: 'button', 'data-action': name, onclick: () => void this.act(controls, () => this.call('inbox_set_status', { id: a.id, action: name, ...note(box) })) }, label)
      controls.push(button)
      return button
    }
    const finished = a.status === 'resolved' || a.status === 'dismissed'
    return h(
      'li',
      { class: 'card', 'data-id': a.id, 'data-status': a.status },
      h('div', { class: 'meta' }, h('span', { class: 'status', 'data-status': a.status }, STATUS_LABEL[a.status]), h('span', {}, a.url ? shortUrl(a.url) : ''), h('span', {}, timeAgo(a.createdAt)), h('span', {}, a.id)),
      h('p', { class: 'comment' }, a.comment),
      a.replies.length > 0 ? h('ol', { class: 'replies', 'aria-label': 'Replies' }, ...a.replies.map((r) => replyItem(r, r === question))) : null,
      // On a read-only server the app's tools do not exist: a write then shows the server's refusal.
      form,
      h('div', { class: 'actions' }, ...(finished ? [action('reopen', 'Reopen')] : [action('resolve', 'Resolve'), action('dismiss', 'Dismiss')])),
    )
  }

  /** Run a write with the card's controls disabled, then read the inbox again. */
  private async act(controls: HTMLButtonElement[], write: () => Promise<unknown>): Promise<void> {
    for (const c of controls) c.disabled = true
    try {
      await write()
      this.error.textContent = ''
      await this.load()
    } catch (e) {
      this.error.textContent = e instanceof Error ? e.message : String(e)
      for (const c of controls) c.disabled = false
    }
  }
}

/** The typed text as the note of a status change, if any. */
function note(box: HTMLTextAreaElement): { message?: string } {
  const message = box.value.trim()
  return message === '' ? {} : { message }
}

function replyItem(r: Reply, open: boolean): HTMLLIElement {
  // What this app writes goes through the agent's connection: shown as such, never as the person's own word.
  const who = r.via === 'host' ? 'Through this app' : r.author === 'human' ? (r.by?.name ?? 'You') : r.kind === 'question' ? (open ? 'The agent asks you' : 'The agent asked') : (r.by?.name ?? 'Agent')
  return h('li', { class: 'reply', 'data-author': r.author, 'data-open': open, ...(r.via ? { 'data-via': r.via } : {}) }, h('b', {}, `${who}:`), r.message)
}

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id)
  if (!el) throw new Error(`#${id} is missing from the app's page`)
  return el as T
}

function applyContext(context: McpUiHostContext | undefined): void {
  if (context?.theme) applyDocumentTheme(context.theme)
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables)
}

declare const __MARGINALIA_VERSION__: string

document.head.append(h('style', {}, css))
const app = new App({ name: 'Marginalia inbox', version: __MARGINALIA_VERSION__ }, {})
const inbox = new InboxApp(app)
// A tool result the host shows the app beside may be newer than what it read: read again.
app.ontoolresult = () => void inbox.load()
app.onhostcontextchanged = (context) => applyContext(context)
void app
  .connect(new PostMessageTransport(window.parent, window.parent))
  .then(() => {
    applyContext(app.getHostContext())
    return inbox.load()
  })
  .catch((e: unknown) => {
    byId('error').textContent = `Could not reach the host: ${e instanceof Error ? e.message : String(e)}`
  })
