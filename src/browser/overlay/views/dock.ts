/**
 * The dock at the bottom right: the toolbar (brand, what the agent is doing, Annotate, the
 * page's count), the alert above it (server unreachable, a load problem, refused annotations) and
 * the toast. It reads the connection's state and tells its owner what the person pressed.
 */
import { h, replace, setText } from '../../shared/dom.js'
import { AGENT_DETAIL, AGENT_LABEL, agentState, openQuestionOf, type AgentState } from '../../shared/format.js'
import { Toast } from '../../shared/toast.js'
import type { Annotation } from '../../shared/types.js'
import type { OutboxItem } from '../sync/outbox.js'
import type { ConnectionState } from '../sync/page-sync.js'
import type { Settings } from '../page/settings.js'
import { icon } from '../../shared/icons.js'
import { screenBox } from './layout.js'

export interface DockEvents {
  /** Annotate is being pressed: read the page's selection before the click clears it. */
  /** The person may be about to annotate (the pointer entered the toolbar, Annotate got focus). */
  intent(): void
  annotatePress(): void
  annotateClick(): void
  /** The count: open or close the list of the page's annotations. */
  toggleList(open?: boolean): void
  /** "Retry now" in the unreachable alert. */
  retry(): void
  /** The alert's height changed: panels above the dock move. */
  resized(): void
  /** The toolbar was collapsed to its brand button, or opened again. */
  collapsed?(collapsed: boolean): void
  /** "Sign in" / "Sign out" (a team server). */
  signIn(): void
  signOut(): void
}

/** The listening dot stays on this long after a watch call ends, so the agent's loop does not flicker. */
const LISTENING_HOLD_MS = 3_000
/** Panels keep clear of the toolbar (and its alert) at the bottom right. */
const DOCK_GAP = 16
const COLLAPSED = 'marginalia:collapsed'

export class Dock {
  readonly element: HTMLDivElement
  readonly annotateButton: HTMLButtonElement
  readonly countButton: HTMLButtonElement
  private readonly alert: HTMLDivElement
  private readonly bar: HTMLDivElement
  private readonly agent: HTMLSpanElement
  /** "Signed in as Alice · Sign out", or "Sign in" when the server asks for it; empty in local use. */
  readonly who: HTMLSpanElement
  private readonly toast: Toast
  private listeningUntil = 0
  /** What the page's Content-Security-Policy blocks (page/csp.ts), when it blocks the overlay. */
  private blocked: string | undefined
  private agentTimer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly server: string,
    private readonly connection: ConnectionState,
    private readonly waiting: () => OutboxItem[],
    private readonly settings: Settings,
    private readonly events: DockEvents,
  ) {
    this.alert = h('div', { class: 'alert', role: 'alert', hidden: true })
    const toast = h('div', { class: 'toast', role: 'status', 'aria-live': 'polite' })
    this.toast = new Toast(toast, 3_500)
    this.agent = h('span', { class: 'agent', role: 'status', 'aria-live': 'polite', 'data-state': 'none' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), h('span', { class: 'agent-text' }, 'Connecting…'))
    this.annotateButton = h(
      'button',
      {
        type: 'button',
        class: 'annotate',
        'aria-pressed': 'false',
        'aria-keyshortcuts': 'Alt+Shift+A',
        title: 'Annotate: click an element or select text (Alt+Shift+A)',
        onpointerdown: () => events.annotatePress(),
        onfocus: () => events.intent(),
        onclick: () => events.annotateClick(),
      },
      icon('pencil'),
      h('span', {}, 'Annotate'),
    )
    this.countButton = h('button', { type: 'button', class: 'count', 'aria-label': 'Annotations on this page', title: 'Annotations on this page', 'aria-expanded': 'false', onclick: () => events.toggleList() }, '0')
    this.who = h('span', { class: 'signed-in', hidden: true })
    const collapsed = settings.get(COLLAPSED) === '1'
    this.bar = h(
      'div',
      { class: `bar${collapsed ? ' collapsed' : ''}`, role: 'toolbar', 'aria-label': 'Marginalia', onpointerenter: () => events.intent() },
      h('button', { type: 'button', class: 'brand', 'aria-label': 'Marginalia: show or hide the toolbar', 'aria-expanded': String(!collapsed), title: 'Marginalia', onclick: () => this.toggleCollapsed() }, 'M'),
      this.agent,
      this.who,
      h('span', { class: 'sep', 'aria-hidden': 'true' }),
      this.annotateButton,
      this.countButton,
    )
    this.element = h('div', { class: 'dock' }, this.alert, toast, this.bar)
  }

  /** What `who` shows now (see renderWho). */
  private whoShown: string | undefined

  /**
   * Who is signed in: `needed` when the server asks people to sign in. Asked again at each
   * /health poll; redrawn only when it changed (new words repaint the whole page).
   */
  renderWho(needed: boolean, name: string | undefined): void {
    const shown = name !== undefined ? `name:${name}` : needed ? 'sign-in' : ''
    if (shown === this.whoShown) return
    this.whoShown = shown
    if (name !== undefined) {
      replace(this.who, h('span', { class: 'who-name' }, `Signed in as ${name}`), ' · ', h('button', { type: 'button', class: 'link sign-out', onclick: () => this.events.signOut() }, 'Sign out'))
      this.who.hidden = false
    } else if (needed) {
      replace(this.who, h('button', { type: 'button', class: 'link sign-in', onclick: () => this.events.signIn() }, 'Sign in'))
      this.who.hidden = false
    } else {
      replace(this.who)
      this.who.hidden = true
    }
  }

  say(message: string): void {
    this.toast.show(message)
  }

  stop(): void {
    this.toast.stop()
    clearTimeout(this.agentTimer)
  }

  /** The page's Content-Security-Policy blocks the overlay: say that (and what to add), not "unreachable". */
  setBlocked(message: string): void {
    this.blocked = message
    this.renderAgent()
    this.renderAlert()
  }

  setAnnotating(on: boolean): void {
    this.annotateButton.setAttribute('aria-pressed', String(on))
  }

  setListOpen(open: boolean): void {
    this.countButton.setAttribute('aria-expanded', String(open))
  }

  /** Height at the bottom the toolbar, the toast's place and the alert take: panels stay above all three. */
  reserve(): number {
    const top = this.element.getBoundingClientRect().top
    const bottom = screenBox().bottom
    if (this.element.offsetHeight > 0 && top > 0 && top < bottom) return bottom - top + 8
    const bar = this.bar.offsetHeight || 40
    const alert = this.alert.hidden ? 0 : this.alert.offsetHeight + 8
    return bar + alert + DOCK_GAP + 8
  }

  /** The count: how many, how many open, how many with a question from the agent. */
  renderCount(all: readonly Annotation[]): void {
    const open = all.filter((a) => a.status === 'pending' || a.status === 'acknowledged').length
    const questions = all.filter((a) => openQuestionOf(a)).length
    setText(this.countButton, String(all.length))
    if (questions > 0) this.countButton.setAttribute('data-question', '')
    else this.countButton.removeAttribute('data-question')
    const label = `Annotations on this page: ${all.length}, ${open} open${questions ? `, ${questions} with a question from the agent` : ''}`
    this.countButton.setAttribute('aria-label', label)
    this.countButton.title = label
  }

  renderAgent(): void {
    clearTimeout(this.agentTimer)
    this.agentTimer = undefined
    const { reachable, presence } = this.connection
    let state: AgentState | 'offline'
    let label: string
    let detail: string
    if (this.blocked !== undefined && reachable !== true) {
      state = 'offline'
      label = 'Blocked by CSP'
      detail = this.blocked
    } else if (reachable === false) {
      state = 'offline'
      label = 'Server unreachable'
      detail = `Can't reach Marginalia at ${this.server}.`
    } else if (reachable === undefined) {
      state = 'none'
      label = 'Connecting…'
      detail = `Connecting to ${this.server}`
    } else {
      let s = agentState(presence)
      const now = Date.now()
      if (s === 'listening') this.listeningUntil = now + LISTENING_HOLD_MS
      else if (now < this.listeningUntil) {
        s = 'listening'
        this.agentTimer = setTimeout(() => this.renderAgent(), this.listeningUntil - now + 10)
      }
      state = s
      label = AGENT_LABEL[s]
      detail = AGENT_DETAIL[s]
    }
    this.agent.setAttribute('data-state', state)
    this.agent.title = detail
    const text = this.agent.querySelector('.agent-text')
    if (text) setText(text, label)
  }

  renderAlert(): void {
    const waiting = this.waiting()
    const unsent = waiting.filter((i) => i.rejected === undefined).length
    const rejected = waiting.length - unsent
    if (this.blocked !== undefined) {
      this.showAlert(h('div', { class: 'csp' }, h('b', {}, 'Marginalia is blocked on this page'), this.blocked))
    } else if (this.connection.refused !== undefined) {
      this.showAlert(h('div', { class: 'foreign' }, h('b', {}, 'Not sent: this is another project’s server'), this.connection.refused), h('button', { type: 'button', class: 'btn', onclick: () => this.events.retry() }, 'Retry now'))
    } else if (this.connection.reachable === false) {
      this.showAlert(
        h(
          'div',
          {},
          h('b', {}, `Can't reach Marginalia at ${this.server.replace(/^https?:\/\//, '')}`),
          unsent > 0 ? `${unsent} annotation${unsent === 1 ? ' is' : 's are'} kept in this browser and will be sent when the server is back.` : 'Annotations you write are kept here until it is back.',
        ),
        h('button', { type: 'button', class: 'btn', onclick: () => this.events.retry() }, 'Retry now'),
      )
    } else if (this.connection.problem !== undefined) {
      this.showAlert(h('div', {}, h('b', {}, 'Marginalia cannot load this page’s annotations'), this.connection.problem))
    } else if (rejected > 0) {
      this.showAlert(
        h('div', {}, h('b', {}, `${rejected} annotation${rejected === 1 ? '' : 's'} could not be sent`), 'The server refused it; your text is kept in the list.'),
        h('button', { type: 'button', class: 'btn', onclick: () => this.events.toggleList(true) }, 'Show'),
      )
    } else {
      this.showAlert()
    }
    this.events.resized()
  }

  /**
   * The alert with this content; hidden without any. Drawn again at every render: the elements are
   * put in only when their words differ from what it shows (new words repaint the whole page).
   */
  private showAlert(...content: HTMLElement[]): void {
    const same = content.length === this.alert.childElementCount && content.map((c) => c.textContent).join('') === this.alert.textContent
    if (!same) replace(this.alert, ...content)
    this.alert.hidden = content.length === 0
  }

  private toggleCollapsed(): void {
    const collapsed = !this.bar.classList.contains('collapsed')
    this.bar.classList.toggle('collapsed', collapsed)
    this.bar.querySelector('.brand')?.setAttribute('aria-expanded', String(!collapsed))
    this.settings.set(COLLAPSED, collapsed ? '1' : '0')
    this.events.collapsed?.(collapsed)
  }

  /** Whether the toolbar is collapsed to its brand button. */
  get collapsed(): boolean {
    return this.bar.classList.contains('collapsed')
  }

  /** More toolbar buttons (after the count), and what opens above the toolbar (a menu). */
  extend(tools: readonly HTMLElement[], above: readonly HTMLElement[] = []): void {
    this.bar.append(...tools)
    for (const el of above) this.bar.before(el)
  }

  /** The toast gone at once (another page: its numbers are not this page's). */
  quiet(): void {
    this.toast.stop()
    this.toast.element.classList.remove('show', 'bad')
  }

  /** The annotate shortcut as the toolbar tells it. */
  setShortcut(text: string): void {
    this.annotateButton.setAttribute('aria-keyshortcuts', text)
    this.annotateButton.title = `Annotate: click an element or select text (${text})`
  }
}
