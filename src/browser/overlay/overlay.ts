/**
 * The Marginalia overlay: one script tag in any page —
 *
 *   <script src="http://127.0.0.1:4848/overlay.js" defer></script>
 *
 * — and the person can point at an element (or select text), write what is wrong, and watch the
 * agent answer. It talks to the server the script came from (REST + Server-Sent Events), lives
 * in a shadow root (the page's CSS and ours never meet), and adds one global, `window.Marginalia`.
 */
import { Api, ApiError, UnreachableError, describeError } from '../shared/api.js'
import { describeElement } from './describe.js'
import { h, placeBeside, replace, type Box } from '../shared/dom.js'
import { AGENT_DETAIL, AGENT_LABEL, STATUS_LABEL, agentState, byCreation, clip, openQuestionOf, squash, type AgentState } from '../shared/format.js'
import { LIMITS } from '../../store/vocabulary.js'
import { LiveStream } from '../shared/live.js'
import { Outbox, Sender, type OutboxItem } from './outbox.js'
import { PageSessions } from './sessions.js'
import { listView, submitOnCtrlEnter, threadView } from './panels.js'
import { Picker, type Target } from './picker.js'
import { OVERLAY_CSS } from './styles.js'
import type { Annotation, Intent, NewAnnotation, Presence, Reply, Session, Severity, StoreEvent } from '../shared/types.js'

declare const __MARGINALIA_VERSION__: string
const VERSION = typeof __MARGINALIA_VERSION__ === 'string' ? __MARGINALIA_VERSION__ : 'dev'

const INTENTS: readonly Intent[] = ['fix', 'change', 'question', 'approve']
const SEVERITIES: readonly Severity[] = ['blocking', 'important', 'suggestion']
/** The listening dot stays on this long after a watch call ends, so the agent's loop does not flicker. */
const LISTENING_HOLD_MS = 3_000
const HEALTH_POLL_MS = 20_000
/** Panels keep clear of the toolbar (and its alert) at the bottom right. */
const DOCK_GAP = 16

/** What `window.Marginalia` offers (for people and for scripts). */
export interface MarginaliaApi {
  readonly version: string
  /** The server this overlay talks to, e.g. `http://127.0.0.1:4848`. */
  readonly server: string
  /** This page's session, once it has one. */
  readonly sessionId: string | undefined
  /** Turn annotate mode on or off (toggles without an argument). */
  annotate(on?: boolean): void
  /** Open the comment box for an element (as a click in annotate mode does). */
  comment(element: Element): void
  /** Open an annotation's thread. */
  open(annotationId: string): void
  /** Try to send the annotations kept in this browser now. */
  flush(): Promise<void>
  /** Remove the overlay from the page. */
  destroy(): void
}

declare global {
  interface Window {
    Marginalia?: MarginaliaApi
  }
}

function storage(): Storage | undefined {
  try {
    const s = window.localStorage
    const probe = '__marginalia_probe__'
    s.setItem(probe, '1')
    s.removeItem(probe)
    return s
  } catch {
    return undefined
  }
}

function newId(): string {
  return typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
}

function rectBox(r: DOMRect): Box {
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
}

/** The server's base URL: `data-server` on the script tag, else the directory the script was loaded from. */
export function serverFromScript(script: HTMLScriptElement | null): string | undefined {
  if (!script) return undefined
  const given = script.dataset.server
  if (given) return given.replace(/\/+$/, '')
  if (!script.src) return undefined
  return new URL('.', script.src).href.replace(/\/+$/, '')
}

export class Overlay implements MarginaliaApi {
  readonly version = VERSION
  readonly api: Api
  private readonly store = storage()
  private readonly outbox: Outbox
  private readonly sessions: PageSessions
  private readonly sender: Sender

  private pageKey = location.origin + location.pathname
  private currentSession: string | undefined
  private annotations = new Map<string, Annotation>()
  private loaded = false
  private loadGeneration = 0
  private loadTimer: ReturnType<typeof setTimeout> | undefined
  private loadDelay = 1_000
  private stream: LiveStream | undefined
  private reachable: boolean | undefined
  private presence: Presence | undefined
  private listeningUntil = 0
  private agentTimer: ReturnType<typeof setTimeout> | undefined
  private composing: Target | undefined
  private openThreadId: string | undefined
  private listOpen = false
  private discardArmed = false
  private hovered: Element | undefined
  private frame = 0
  private toastTimer: ReturnType<typeof setTimeout> | undefined
  private readonly intervals: ReturnType<typeof setInterval>[] = []
  private readonly elementCache = new Map<string, Element | null>()
  private readonly pinButtons = new Map<string, HTMLButtonElement>()
  private returnFocus: HTMLElement | undefined
  private destroyed = false
  /** Why loading fails although the server answers (shown in the alert until a load works). */
  private problem: string | undefined

  // DOM
  private readonly host: HTMLElement
  private readonly shadow: ShadowRoot
  private readonly root: HTMLDivElement
  private readonly highlight: HTMLDivElement
  private readonly highlightLabel: HTMLSpanElement
  private readonly targetOutline: HTMLDivElement
  private readonly pins: HTMLDivElement
  private readonly composer: HTMLFormElement
  private readonly composerTarget: HTMLDivElement
  private readonly composerText: HTMLTextAreaElement
  private readonly composerError: HTMLDivElement
  private readonly thread: HTMLElement
  private readonly list: HTMLElement
  private readonly alert: HTMLDivElement
  private readonly toastEl: HTMLDivElement
  private readonly bar: HTMLDivElement
  private readonly agentEl: HTMLSpanElement
  private readonly annotateButton: HTMLButtonElement
  private readonly countButton: HTMLButtonElement
  private readonly picker: Picker

  constructor(readonly server: string) {
    this.api = new Api(server)
    this.outbox = new Outbox(this.store, `marginalia:outbox:${server}`)
    this.sessions = new PageSessions(this.api, this.store, `marginalia:session:${server}:`, (pageKey, session) => this.adoptSession(pageKey, session))
    this.sender = new Sender(
      this.api,
      this.outbox,
      this.sessions,
      {
        sent: (item, annotation, sessionId) => this.onSent(item, annotation, sessionId),
        blocked: () => {
          this.setReachable(false)
          this.renderAlert()
          this.renderList()
        },
        drained: () => this.renderAlert(),
        rejected: (_item, error) => {
          this.toast(`An annotation could not be sent: ${error}`)
          this.renderAlert()
          this.renderList()
        },
      },
      { lockName: `marginalia-outbox:${server}` },
    )

    this.host = document.createElement('marginalia-overlay')
    this.host.setAttribute('data-marginalia', '')
    this.shadow = this.host.attachShadow({ mode: 'open' })
    const style = document.createElement('style')
    style.textContent = OVERLAY_CSS
    this.picker = new Picker(this.host, {
      pick: (target) => this.openComposer(target),
      hover: (element) => {
        if (element === this.hovered) return
        this.hovered = element
        this.schedulePosition()
      },
      changed: (on) => {
        this.annotateButton.setAttribute('aria-pressed', String(on))
        if (on) this.toast('Click an element or select text to annotate it. Esc to stop.')
      },
      composing: () => this.composing !== undefined,
    })

    this.highlightLabel = h('span', { class: 'label' })
    this.highlight = h('div', { class: 'highlight', hidden: true }, this.highlightLabel)
    this.targetOutline = h('div', { class: 'target-outline', hidden: true })
    this.pins = h('div', { class: 'pins' })

    // ---- the comment box ----
    this.composerTarget = h('div', { class: 'target' })
    this.composerText = h('textarea', {
      name: 'comment',
      'aria-label': 'Comment',
      placeholder: 'What should change here?',
      maxlength: LIMITS.comment,
      required: true,
      oninput: () => {
        this.discardArmed = false
        this.composerError.hidden = true
      },
    })
    this.composerError = h('div', { class: 'error', role: 'alert', hidden: true })
    const choice = (name: string, legend: string, values: readonly string[], checked: string) =>
      h(
        'fieldset',
        {},
        h('legend', {}, legend),
        h('div', { class: 'seg' }, ...values.map((v) => h('label', {}, h('input', { type: 'radio', name, value: v, checked: v === checked }), h('span', {}, v)))),
      )
    this.composer = h(
      'form',
      { class: 'panel composer', role: 'dialog', 'aria-label': 'New annotation', hidden: true, novalidate: true, onsubmit: (e: Event) => this.onComposerSubmit(e) },
      h('div', { class: 'panel-head' }, h('div', { class: 'panel-title' }, 'New annotation'), h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close', title: 'Close (Esc)', onclick: () => this.closeComposer(true) }, '×')),
      h('div', { class: 'panel-body' }, this.composerTarget, this.composerText, choice('intent', 'Intent', INTENTS, 'fix'), choice('severity', 'Severity', SEVERITIES, 'important'), this.composerError),
      h(
        'div',
        { class: 'panel-foot' },
        h('span', { class: 'hint' }, 'Ctrl+Enter to send'),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'btn', onclick: () => this.closeComposer(true) }, 'Cancel'),
        h('button', { type: 'submit', class: 'btn primary' }, 'Send'),
      ),
    )
    submitOnCtrlEnter(this.composerText, this.composer)

    this.thread = h('section', { class: 'panel thread', role: 'dialog', 'aria-label': 'Annotation thread', hidden: true, tabindex: -1 })
    this.list = h('section', { class: 'panel list-panel', role: 'dialog', 'aria-label': 'Annotations on this page', hidden: true, tabindex: -1 })

    // ---- the dock: alert, toast, toolbar ----
    this.alert = h('div', { class: 'alert', role: 'alert', hidden: true })
    this.toastEl = h('div', { class: 'toast', role: 'status', 'aria-live': 'polite' })
    this.agentEl = h('span', { class: 'agent', role: 'status', 'aria-live': 'polite', 'data-state': 'none' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), h('span', { class: 'agent-text' }, 'Connecting…'))
    this.annotateButton = h(
      'button',
      {
        type: 'button',
        class: 'annotate',
        'aria-pressed': 'false',
        'aria-keyshortcuts': 'Alt+Shift+A',
        title: 'Annotate: click an element or select text (Alt+Shift+A)',
        // Read the page's selection before the click can clear it.
        onpointerdown: () => this.picker.remember(),
        onclick: () => this.picker.toggleRemembered(),
      },
      h('span', { 'aria-hidden': 'true' }, '✎'),
      h('span', {}, 'Annotate'),
    )
    this.countButton = h('button', { type: 'button', class: 'count', 'aria-label': 'Annotations on this page', title: 'Annotations on this page', 'aria-expanded': 'false', onclick: () => this.toggleList() }, '0')
    const collapsed = this.read('marginalia:collapsed') === '1'
    this.bar = h(
      'div',
      { class: `bar${collapsed ? ' collapsed' : ''}`, role: 'toolbar', 'aria-label': 'Marginalia' },
      h('button', { type: 'button', class: 'brand', 'aria-label': 'Marginalia: show or hide the toolbar', 'aria-expanded': String(!collapsed), title: 'Marginalia', onclick: () => this.toggleCollapsed() }, 'M'),
      this.agentEl,
      h('span', { class: 'sep', 'aria-hidden': 'true' }),
      this.annotateButton,
      this.countButton,
    )
    const dock = h('div', { class: 'dock' }, this.alert, this.toastEl, this.bar)

    this.root = h('div', { class: 'mg' }, this.pins, this.highlight, this.targetOutline, this.composer, this.thread, this.list, dock)
    this.shadow.append(style, this.root)
    // What happens in the overlay stays in the overlay: the page's shortcuts must not fire while the
    // person writes, and its "click outside" handlers must not see clicks on our buttons.
    for (const type of ['keydown', 'keyup', 'keypress', 'input', 'click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'contextmenu', 'focusin', 'focusout', 'wheel'] as const) {
      this.root.addEventListener(type, (e) => e.stopPropagation())
    }
  }

  // ------------------------------------------------------------------ life cycle

  mount(): void {
    document.documentElement.appendChild(this.host)
    window.addEventListener('keydown', this.onKeyDown, true)
    this.picker.attach()
    window.addEventListener('scroll', this.schedulePosition, { capture: true, passive: true })
    window.addEventListener('resize', this.schedulePosition, { passive: true })
    window.addEventListener('online', this.onOnline)
    window.addEventListener('storage', this.onStorage)
    this.intervals.push(setInterval(() => this.checkLocation(), 1_000))
    this.intervals.push(setInterval(() => this.pollHealth(), HEALTH_POLL_MS))
    // Elements come and go (client-side rendering): look them up again now and then.
    this.intervals.push(
      setInterval(() => {
        this.elementCache.clear()
        this.schedulePosition()
      }, 1_000),
    )
    this.renderAll()
    void this.load()
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.picker.detach()
    window.removeEventListener('keydown', this.onKeyDown, true)
    window.removeEventListener('scroll', this.schedulePosition, true)
    window.removeEventListener('resize', this.schedulePosition)
    window.removeEventListener('online', this.onOnline)
    window.removeEventListener('storage', this.onStorage)
    for (const i of this.intervals) clearInterval(i)
    for (const t of [this.loadTimer, this.agentTimer, this.toastTimer]) if (t !== undefined) clearTimeout(t)
    if (this.frame) cancelAnimationFrame(this.frame)
    this.stream?.close()
    this.sender.stop()
    this.host.remove()
    if (window.Marginalia === this) delete window.Marginalia
  }

  // ------------------------------------------------------------------ public API

  get sessionId(): string | undefined {
    return this.currentSession
  }

  annotate(on?: boolean): void {
    this.picker.set(on ?? !this.picker.active)
  }

  comment(element: Element): void {
    this.openComposer({ element, info: describeElement(element) })
  }

  open(annotationId: string): void {
    this.openThread(annotationId)
  }

  flush(): Promise<void> {
    return this.sender.flush()
  }

  // ------------------------------------------------------------------ loading and live updates

  private async load(): Promise<void> {
    const generation = ++this.loadGeneration
    if (this.loadTimer !== undefined) clearTimeout(this.loadTimer)
    this.loadTimer = undefined
    try {
      const health = await this.api.health()
      if (generation !== this.loadGeneration) return
      this.setPresence(health.agent)
      this.setReachable(true)
      let rev = health.rev
      let id = this.sessions.stored(this.pageKey)
      let annotations: Annotation[] = []
      if (id !== undefined) {
        try {
          ;({ annotations, rev } = await this.fetchSession(id))
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 404)) throw e
          this.sessions.forget(this.pageKey) // a new store: this page starts a new session when it needs one
          id = undefined
        }
      }
      if (id === undefined) {
        const found = await this.sessions.find(this.pageKey)
        if (found) {
          id = found.id
          this.sessions.remember(this.pageKey, id)
          ;({ annotations, rev } = await this.fetchSession(id))
        }
      }
      if (generation !== this.loadGeneration) return
      this.currentSession = id
      this.annotations = new Map(annotations.map((a) => [a.id, a]))
      this.elementCache.clear()
      this.loaded = true
      this.problem = undefined
      this.loadDelay = 1_000
      this.openStream(rev)
      this.renderAll()
      void this.sender.flush()
    } catch (e) {
      if (generation !== this.loadGeneration) return
      if (e instanceof UnreachableError) this.setReachable(false)
      else {
        // e.g. 401: a server started with --token, which a browser page cannot send (see the README).
        this.problem = e instanceof ApiError && e.status === 401 ? 'This server requires a token, which the overlay cannot send. Run it without --token on 127.0.0.1.' : describeError(e)
        this.renderAlert()
      }
      this.loadTimer = setTimeout(() => void this.load(), this.loadDelay)
      this.loadDelay = Math.min(15_000, this.loadDelay * 2)
    }
  }

  /** A session's annotations, page after page, and the rev the first page reflects (the stream resumes from there). */
  private async fetchSession(id: string): Promise<{ annotations: Annotation[]; rev: number }> {
    const first = await this.api.session(id)
    const annotations = [...first.annotations]
    let cursor = first.nextCursor
    while (cursor !== undefined) {
      const page = await this.api.session(id, { cursor })
      annotations.push(...page.annotations)
      cursor = page.nextCursor
    }
    return { annotations, rev: first.rev }
  }

  private openStream(rev: number): void {
    this.stream?.close()
    const path = this.currentSession === undefined ? '/api/events' : `/api/sessions/${encodeURIComponent(this.currentSession)}/events`
    this.stream = new LiveStream(this.server + path, rev, {
      event: (e) => this.onEvent(e),
      reset: () => void this.refresh(),
      presence: (p) => this.setPresence(p),
      open: () => this.setReachable(true),
      down: () => void this.probe(),
    })
  }

  /** Reload this page's annotations (after a `reset`), keeping the stream. */
  private async refresh(): Promise<void> {
    if (this.currentSession === undefined) return
    try {
      const { annotations } = await this.fetchSession(this.currentSession)
      this.annotations = new Map(annotations.map((a) => [a.id, a]))
      this.renderAll()
    } catch (e) {
      if (e instanceof UnreachableError) this.setReachable(false)
    }
  }

  /** The stream dropped: is the server gone, or only our session? */
  private async probe(): Promise<void> {
    try {
      const health = await this.api.health()
      this.setPresence(health.agent)
      this.setReachable(true)
      if (this.currentSession !== undefined) {
        try {
          await this.api.session(this.currentSession, { limit: 1 })
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) {
            this.sessions.forget(this.pageKey)
            this.stream?.close()
            this.stream = undefined
            this.currentSession = undefined
            void this.load()
          }
        }
      }
    } catch {
      this.setReachable(false)
    }
  }

  private async pollHealth(): Promise<void> {
    if (document.visibilityState === 'hidden') return
    try {
      const health = await this.api.health()
      this.setPresence(health.agent)
      this.setReachable(true)
    } catch {
      this.setReachable(false)
    }
  }

  private adoptSession(pageKey: string, session: Session | string): void {
    if (pageKey !== this.pageKey || this.currentSession !== undefined) return
    this.currentSession = typeof session === 'string' ? session : session.id
    this.annotations = new Map()
    // Resume from the session's creation: its first annotation is after it.
    this.openStream(typeof session === 'string' ? (this.stream?.rev ?? 0) : session.rev)
  }

  private onEvent(e: StoreEvent): void {
    if (this.currentSession === undefined) {
      if (e.type === 'session.created' && e.session.url === this.pageKey) {
        this.sessions.remember(this.pageKey, e.session.id)
        this.adoptSession(this.pageKey, e.session)
      }
      return
    }
    if (e.sessionId !== this.currentSession) return
    switch (e.type) {
      case 'annotation.created':
        this.annotations.set(e.annotation.id, e.annotation)
        break
      case 'annotation.status_changed': {
        const a = this.annotations.get(e.annotationId)
        if (!a) return void this.fetchOne(e.annotationId)
        a.status = e.to
        a.rev = e.rev
        a.updatedAt = e.at
        if (e.to === 'resolved' || e.to === 'dismissed') a.resolvedAt = e.at
        if (e.reply) addReply(a, e.reply)
        break
      }
      case 'annotation.replied': {
        const a = this.annotations.get(e.annotationId)
        if (!a) return void this.fetchOne(e.annotationId)
        addReply(a, e.reply)
        a.rev = e.rev
        a.updatedAt = e.at
        if (e.reply.author === 'agent' && this.openThreadId !== e.annotationId) {
          this.toast(e.reply.kind === 'question' ? `The agent asks about #${this.numberOf(a.id)}` : `The agent replied on #${this.numberOf(a.id)}`)
        }
        break
      }
      case 'annotation.deleted':
      case 'annotation.archived':
        this.annotations.delete(e.annotationId)
        if (this.openThreadId === e.annotationId) {
          this.closeThread()
          this.toast(e.type === 'annotation.deleted' ? 'That annotation was deleted.' : 'That annotation was archived.')
        }
        break
      default:
        return
    }
    this.renderAll()
  }

  private async fetchOne(id: string): Promise<void> {
    try {
      const a = await this.api.annotation(id)
      if (a.sessionId === this.currentSession) this.annotations.set(a.id, a)
      this.renderAll()
    } catch {
      // it may be gone already; the next event or reload sorts it out
    }
  }

  private setPresence(p: Presence | undefined): void {
    if (!p) return
    this.presence = p
    this.renderAgent()
  }

  private setReachable(ok: boolean): void {
    const was = this.reachable
    this.reachable = ok
    if (ok && was === false) {
      // The server is back: send what waited, and catch up.
      this.stream?.retryNow()
      this.sender.retrySoon()
      if (!this.loaded) void this.load()
    }
    if (!ok && !this.loaded && this.loadTimer === undefined) {
      this.loadTimer = setTimeout(() => void this.load(), this.loadDelay)
    }
    if (was !== ok) {
      this.renderAgent()
      this.renderAlert()
    }
  }

  private onSent(item: OutboxItem, annotation: Annotation, sessionId: string): void {
    if (item.pageKey === this.pageKey) {
      if (this.currentSession === undefined) this.adoptSession(this.pageKey, sessionId)
      if (sessionId === this.currentSession) this.annotations.set(annotation.id, this.annotations.get(annotation.id) ?? annotation)
      this.renderAll()
      this.toast(`Sent as #${this.numberOf(annotation.id)}. ${agentState(this.presence) === 'listening' ? 'The agent is on it.' : 'It waits for the agent.'}`)
    } else {
      this.toast('A kept annotation from another page was sent.')
    }
    this.setReachable(true)
    this.renderAlert()
  }

  private readonly onOnline = (): void => {
    this.stream?.retryNow()
    this.sender.retrySoon()
    if (!this.loaded) void this.load()
  }

  private readonly onStorage = (e: StorageEvent): void => {
    if (e.key === this.outbox.key) {
      this.renderAlert()
      this.renderList()
    }
  }

  private checkLocation(): void {
    const key = location.origin + location.pathname
    if (key === this.pageKey) return
    // Client-side navigation: another page, another session.
    this.pageKey = key
    this.closeComposer(false)
    this.closeThread()
    this.stream?.close()
    this.stream = undefined
    this.currentSession = undefined
    this.annotations = new Map()
    this.elementCache.clear()
    this.loaded = false
    this.renderAll()
    void this.load()
  }

  // ------------------------------------------------------------------ annotate mode

  private readonly onKeyDown = (e: KeyboardEvent): void => {
    if (e.altKey && e.shiftKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyA') {
      e.preventDefault()
      e.stopPropagation()
      this.picker.toggle()
      return
    }
    if (e.key === 'Escape') {
      if (this.escape()) {
        e.preventDefault()
        e.stopPropagation()
      }
      return
    }
    // Keyboard annotation: in annotate mode, Enter on a focused page element annotates it.
    if (this.picker.pickFocused(e)) {
      e.preventDefault()
      e.stopPropagation()
    }
  }

  /** Close the innermost open thing; false when nothing was open. */
  private escape(): boolean {
    if (this.composing) {
      if (this.composerText.value.trim() !== '' && !this.discardArmed) {
        this.discardArmed = true
        this.showComposerError('Press Esc again to discard this comment.')
        return true
      }
      this.closeComposer(true)
      return true
    }
    if (this.openThreadId !== undefined) {
      this.closeThread()
      return true
    }
    if (this.listOpen) {
      this.toggleList(false)
      return true
    }
    if (this.picker.active) {
      this.picker.set(false)
      return true
    }
    return false
  }

  // ------------------------------------------------------------------ the comment box

  private openComposer(target: Target): void {
    const keepText = this.composing !== undefined
    this.closeThread()
    this.toggleList(false)
    if (!keepText) {
      this.returnFocus = this.activeInside() ?? this.annotateButton
      this.composerText.value = ''
      for (const input of this.composer.querySelectorAll<HTMLInputElement>('input[name="intent"]')) input.checked = input.value === 'fix'
      for (const input of this.composer.querySelectorAll<HTMLInputElement>('input[name="severity"]')) input.checked = input.value === 'important'
    }
    this.composing = target
    this.discardArmed = false
    this.composerError.hidden = true
    const { info } = target
    replace(
      this.composerTarget,
      h('code', { title: info.path ?? info.selector }, info.selector),
      info.text ? h('span', { class: 'snippet' }, `“${clip(info.text, 80)}”`) : null,
    )
    const quote = this.composer.querySelector('blockquote')
    quote?.remove()
    if (target.selectedText) this.composerTarget.after(h('blockquote', { class: 'selected', 'aria-label': 'Selected text' }, clip(target.selectedText, 600)))
    this.composer.hidden = false
    this.hovered = undefined
    this.highlight.hidden = true
    this.positionAll()
    this.composerText.focus()
  }

  private closeComposer(restoreFocus: boolean): void {
    if (!this.composing) return
    this.composing = undefined
    this.composer.hidden = true
    this.discardArmed = false
    this.schedulePosition()
    if (restoreFocus) this.restoreFocus()
  }

  private showComposerError(message: string): void {
    this.composerError.textContent = message
    this.composerError.hidden = false
  }

  private onComposerSubmit(e: Event): void {
    e.preventDefault()
    const target = this.composing
    if (!target) return
    const comment = this.composerText.value.trim()
    if (comment === '') {
      this.showComposerError('Write a comment first.')
      this.composerText.focus()
      return
    }
    const data = new FormData(this.composer)
    const body: NewAnnotation = {
      comment: clip(comment, LIMITS.comment),
      url: clip(location.href, LIMITS.url),
      element: target.info,
      intent: (data.get('intent') as Intent | null) ?? 'fix',
      severity: (data.get('severity') as Severity | null) ?? 'important',
      viewport: { width: Math.round(window.innerWidth), height: Math.round(window.innerHeight) },
    }
    if (target.selectedText) body.selectedText = clip(target.selectedText, LIMITS.selectedText)
    // Into the outbox first: from here on, nothing the person wrote can be lost.
    const title = squash(document.title)
    const item: OutboxItem = { id: newId(), queuedAt: new Date().toISOString(), pageKey: this.pageKey, body, attempts: 0 }
    if (title) item.pageTitle = clip(title, LIMITS.name)
    this.outbox.add(item)
    this.closeComposer(true)
    this.toast(this.reachable === false ? 'Kept in this browser until the server is back.' : 'Sending…')
    this.renderAlert()
    void this.sender.flush()
  }

  // ------------------------------------------------------------------ threads

  private ordered(): Annotation[] {
    return [...this.annotations.values()].sort(byCreation)
  }

  private numberOf(id: string): number {
    return this.ordered().findIndex((a) => a.id === id) + 1
  }

  private openThread(id: string): void {
    if (!this.annotations.has(id)) return
    this.closeComposer(false)
    this.toggleList(false)
    if (this.openThreadId === undefined) this.returnFocus = this.activeInside() ?? this.annotateButton
    this.openThreadId = id
    this.thread.hidden = false
    this.renderThread(true)
    this.renderPins()
    const a = this.annotations.get(id)!
    const el = this.elementOf(a)
    if (el) {
      const r = el.getBoundingClientRect()
      if (r.bottom < 0 || r.top > window.innerHeight) el.scrollIntoView({ block: 'center', behavior: 'smooth' })
    }
    const question = openQuestionOf(a)
    const focusTarget = question ? this.thread.querySelector('textarea') : this.thread
    ;(focusTarget ?? this.thread).focus()
  }

  private closeThread(): void {
    if (this.openThreadId === undefined) return
    this.openThreadId = undefined
    this.thread.hidden = true
    replace(this.thread)
    this.renderPins()
    this.restoreFocus()
  }

  /** Build the thread panel. The reply box survives live updates (what is being typed stays). */
  private renderThread(fresh = false): void {
    const id = this.openThreadId
    if (id === undefined) return
    const a = this.annotations.get(id)
    if (!a) {
      this.closeThread()
      return
    }
    const draft = fresh ? '' : (this.thread.querySelector<HTMLTextAreaElement>('.reply-form textarea')?.value ?? '')
    const hadFocus = !fresh && this.shadow.activeElement?.closest('.reply-form') != null
    const n = this.numberOf(id)
    const update = (fresher: Annotation) => {
      this.annotations.set(fresher.id, mergeReplies(this.annotations.get(fresher.id), fresher))
      this.renderAll()
    }
    const { nodes, textarea } = threadView(a, n, draft, {
      reply: async (message) => update(await this.api.reply(a.id, message)),
      reopen: async (message) => {
        update(await this.api.reopen(a.id, message))
        this.toast(`#${n} is pending again.`)
      },
      remove: async () => {
        await this.api.remove(a.id)
        this.annotations.delete(a.id)
        this.closeThread()
        this.renderAll()
        this.toast(`#${n} deleted.`)
      },
      close: () => this.closeThread(),
      unreachable: () => this.setReachable(false),
    })
    replace(this.thread, ...nodes)
    this.thread.setAttribute('aria-labelledby', 'mg-thread-title')
    if (hadFocus) textarea.focus()
    const body = this.thread.querySelector('.panel-body')
    if (body && !fresh) body.scrollTop = body.scrollHeight
    this.positionAll()
  }

  // ------------------------------------------------------------------ list of this page's annotations

  private toggleList(open = !this.listOpen): void {
    if (open === this.listOpen) return
    this.listOpen = open
    this.countButton.setAttribute('aria-expanded', String(open))
    if (open) {
      this.closeComposer(false)
      this.closeThread()
      this.returnFocus = this.countButton
      this.list.hidden = false
      this.renderList()
      this.list.focus()
    } else {
      this.list.hidden = true
      replace(this.list)
    }
  }

  private renderList(): void {
    if (!this.listOpen) return
    replace(
      this.list,
      ...listView(this.ordered(), this.outbox.list(), this.server, {
        open: (id) => this.openThread(id),
        close: () => this.toggleList(false),
        discard: (item) => {
          this.outbox.remove(item.id)
          this.renderList()
          this.renderAlert()
        },
        retry: () => this.sender.retrySoon(),
        onPage: (a) => this.elementOf(a) !== null,
      }),
    )
    this.positionAll()
  }

  // ------------------------------------------------------------------ rendering

  private renderAll(): void {
    this.renderPins()
    this.renderBar()
    this.renderThread()
    this.renderList()
    this.renderAlert()
  }

  private renderBar(): void {
    const all = [...this.annotations.values()]
    const open = all.filter((a) => a.status === 'pending' || a.status === 'acknowledged').length
    const questions = all.filter((a) => openQuestionOf(a)).length
    this.countButton.textContent = String(all.length)
    if (questions > 0) this.countButton.setAttribute('data-question', '')
    else this.countButton.removeAttribute('data-question')
    const label = `Annotations on this page: ${all.length}, ${open} open${questions ? `, ${questions} with a question from the agent` : ''}`
    this.countButton.setAttribute('aria-label', label)
    this.countButton.title = label
    this.renderAgent()
  }

  private renderAgent(): void {
    if (this.agentTimer !== undefined) clearTimeout(this.agentTimer)
    this.agentTimer = undefined
    let state: AgentState | 'offline'
    let label: string
    let detail: string
    if (this.reachable === false) {
      state = 'offline'
      label = 'Server unreachable'
      detail = `Can't reach Marginalia at ${this.server}.`
    } else if (this.reachable === undefined) {
      state = 'none'
      label = 'Connecting…'
      detail = `Connecting to ${this.server}`
    } else {
      let s = agentState(this.presence)
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
    this.agentEl.setAttribute('data-state', state)
    this.agentEl.title = detail
    const text = this.agentEl.querySelector('.agent-text')
    if (text && text.textContent !== label) text.textContent = label
  }

  private renderAlert(): void {
    const waiting = this.outbox.list()
    const unsent = waiting.filter((i) => i.rejected === undefined).length
    const rejected = waiting.length - unsent
    if (this.reachable === false) {
      replace(
        this.alert,
        h(
          'div',
          {},
          h('b', {}, `Can't reach Marginalia at ${this.server.replace(/^https?:\/\//, '')}`),
          unsent > 0 ? `${unsent} annotation${unsent === 1 ? ' is' : 's are'} kept in this browser and will be sent when the server is back.` : 'Annotations you write are kept here until it is back.',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'btn',
            onclick: () => {
              void this.probe()
              this.sender.retrySoon()
              if (!this.loaded) void this.load()
            },
          },
          'Retry now',
        ),
      )
      this.alert.hidden = false
    } else if (this.problem !== undefined) {
      replace(this.alert, h('div', {}, h('b', {}, 'Marginalia cannot load this page’s annotations'), this.problem))
      this.alert.hidden = false
    } else if (rejected > 0) {
      replace(
        this.alert,
        h('div', {}, h('b', {}, `${rejected} annotation${rejected === 1 ? '' : 's'} could not be sent`), 'The server refused it; your text is kept in the list.'),
        h('button', { type: 'button', class: 'btn', onclick: () => this.toggleList(true) }, 'Show'),
      )
      this.alert.hidden = false
    } else {
      this.alert.hidden = true
      replace(this.alert)
    }
    this.schedulePosition()
  }

  private renderPins(): void {
    const ordered = this.ordered()
    const seen = new Set<string>()
    ordered.forEach((a, i) => {
      seen.add(a.id)
      let pin = this.pinButtons.get(a.id)
      if (!pin) {
        pin = h('button', { type: 'button', class: 'pin', onclick: () => (this.openThreadId === a.id ? this.closeThread() : this.openThread(a.id)) })
        this.pinButtons.set(a.id, pin)
        this.pins.appendChild(pin)
      }
      const q = openQuestionOf(a)
      pin.textContent = String(i + 1)
      pin.setAttribute('data-status', a.status)
      pin.setAttribute('data-id', a.id)
      if (q) pin.setAttribute('data-question', '')
      else pin.removeAttribute('data-question')
      pin.setAttribute('aria-expanded', String(this.openThreadId === a.id))
      pin.setAttribute('aria-label', `Annotation ${i + 1}, ${STATUS_LABEL[a.status].toLowerCase()}${q ? ', the agent asks a question' : ''}: ${clip(a.comment, 80)}`)
      pin.title = `#${i + 1} · ${STATUS_LABEL[a.status]}${q ? ' · question from the agent' : ''}\n${clip(a.comment, 140)}`
    })
    for (const [id, pin] of this.pinButtons) {
      if (!seen.has(id)) {
        pin.remove()
        this.pinButtons.delete(id)
        this.elementCache.delete(id)
      }
    }
    this.positionAll()
  }

  private elementOf(a: Annotation): Element | null {
    if (this.elementCache.has(a.id)) {
      const cached = this.elementCache.get(a.id) ?? null
      if (!cached || cached.isConnected) return cached
    }
    let el: Element | null = null
    const selector = a.element?.selector
    if (selector) {
      try {
        el = document.querySelector(selector)
      } catch {
        el = null
      }
    }
    if (el && (el === this.host || this.host.contains(el))) el = null
    this.elementCache.set(a.id, el)
    return el
  }

  private readonly schedulePosition = (): void => {
    if (this.frame) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.positionAll()
    })
  }

  /** Pins on their elements, the highlight on the hovered element, panels beside what they belong to. */
  private positionAll(): void {
    if (this.destroyed) return
    const vw = document.documentElement.clientWidth || window.innerWidth
    const vh = document.documentElement.clientHeight || window.innerHeight
    const perElement = new Map<Element, number>()
    let openPinBox: Box | undefined
    for (const a of this.ordered()) {
      const pin = this.pinButtons.get(a.id)
      if (!pin) continue
      const el = this.elementOf(a)
      const r = el?.getBoundingClientRect()
      if (!el || !r || (r.width === 0 && r.height === 0) || r.bottom < 0 || r.top > vh || r.right < 0 || r.left > vw) {
        pin.hidden = true
        continue
      }
      const k = perElement.get(el) ?? 0
      perElement.set(el, k + 1)
      // The pin's tip on the element's top-right corner, its body just outside it.
      const x = Math.max(8, Math.min(r.right - 2 - k * 30, vw - 30))
      const y = Math.max(26, Math.min(r.top + 2, vh - 4))
      pin.hidden = false
      pin.style.left = `${x}px`
      pin.style.top = `${y}px`
      if (a.id === this.openThreadId) openPinBox = { left: x - 4, top: y - 22, right: x + 22, bottom: y + 4 }
    }

    if (this.picker.active && this.hovered && !this.composing && this.hovered.isConnected) {
      const r = this.hovered.getBoundingClientRect()
      this.highlight.hidden = false
      this.highlight.style.left = `${r.left - 2}px`
      this.highlight.style.top = `${r.top - 2}px`
      this.highlight.style.width = `${r.width + 4}px`
      this.highlight.style.height = `${r.height + 4}px`
      this.highlight.classList.toggle('below', r.top < 28)
      const id = this.hovered.id ? `#${this.hovered.id}` : ''
      const cls = [...this.hovered.classList].slice(0, 2).map((c) => `.${c}`).join('')
      this.highlightLabel.textContent = `${this.hovered.localName}${id}${cls}  ${Math.round(r.width)}×${Math.round(r.height)}`
    } else {
      this.highlight.hidden = true
    }

    // A dashed outline on what the open box or thread is about.
    let outlined: DOMRect | undefined
    if (this.composing) {
      const r = this.composing.rect ?? this.composing.element.getBoundingClientRect()
      if (this.composing.element.isConnected) outlined = r
      this.place(this.composer, rectBox(r))
    }
    if (this.openThreadId !== undefined) {
      const a = this.annotations.get(this.openThreadId)
      const el = a ? this.elementOf(a) : null
      const r = el?.getBoundingClientRect()
      outlined = r
      // Beside the element and its pin, so the panel never hides what it talks about.
      const box = r ? rectBox(r) : undefined
      const anchor = box && openPinBox ? union(box, openPinBox) : (openPinBox ?? box)
      this.place(this.thread, anchor)
    }
    this.targetOutline.hidden = outlined === undefined
    if (outlined) {
      this.targetOutline.style.left = `${outlined.left - 3}px`
      this.targetOutline.style.top = `${outlined.top - 3}px`
      this.targetOutline.style.width = `${outlined.width + 6}px`
      this.targetOutline.style.height = `${outlined.height + 6}px`
    }
    if (this.listOpen) this.place(this.list, undefined)
  }

  /** Height at the bottom the toolbar and its alert take. */
  private dockReserve(): number {
    const bar = this.bar.offsetHeight || 40
    const alert = this.alert.hidden ? 0 : this.alert.offsetHeight + 8
    return bar + alert + DOCK_GAP + 8
  }

  /** Beside the anchor; without one, above the toolbar at the bottom right. */
  private place(panel: HTMLElement, anchor: Box | undefined): void {
    const w = panel.offsetWidth || 360
    const ht = panel.offsetHeight || 300
    if (!anchor) {
      const vw = document.documentElement.clientWidth || window.innerWidth
      const vh = document.documentElement.clientHeight || window.innerHeight
      panel.style.left = `${Math.max(12, vw - w - 16)}px`
      panel.style.top = `${Math.max(12, vh - ht - this.dockReserve())}px`
      return
    }
    const { left, top } = placeBeside(anchor, w, ht, 12, 10, this.dockReserve())
    panel.style.left = `${left}px`
    panel.style.top = `${top}px`
  }

  // ------------------------------------------------------------------ small things

  private toast(message: string): void {
    this.toastEl.textContent = message
    this.toastEl.classList.add('show')
    if (this.toastTimer !== undefined) clearTimeout(this.toastTimer)
    this.toastTimer = setTimeout(() => this.toastEl.classList.remove('show'), 3_500)
  }

  private toggleCollapsed(): void {
    const collapsed = !this.bar.classList.contains('collapsed')
    this.bar.classList.toggle('collapsed', collapsed)
    this.bar.querySelector('.brand')?.setAttribute('aria-expanded', String(!collapsed))
    this.write('marginalia:collapsed', collapsed ? '1' : '0')
  }

  private activeInside(): HTMLElement | undefined {
    const a = this.shadow.activeElement
    return a instanceof HTMLElement ? a : undefined
  }

  private restoreFocus(): void {
    const back = this.returnFocus
    this.returnFocus = undefined
    if (back && back.isConnected && !back.closest('[hidden]')) back.focus()
  }

  private read(key: string): string | null {
    try {
      return this.store?.getItem(key) ?? null
    } catch {
      return null
    }
  }

  private write(key: string, value: string): void {
    try {
      this.store?.setItem(key, value)
    } catch {
      // not remembered
    }
  }
}

function union(a: Box, b: Box): Box {
  return { left: Math.min(a.left, b.left), top: Math.min(a.top, b.top), right: Math.max(a.right, b.right), bottom: Math.max(a.bottom, b.bottom) }
}

function addReply(a: Annotation, reply: Reply): void {
  if (!a.replies.some((r) => r.id === reply.id)) a.replies.push(reply)
}

/** A fresher copy from a response, keeping replies a live event may already have added. */
function mergeReplies(old: Annotation | undefined, fresh: Annotation): Annotation {
  if (!old) return fresh
  const merged = { ...fresh, replies: [...fresh.replies] }
  for (const r of old.replies) addReply(merged, r)
  merged.replies.sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : 0))
  return merged.rev >= old.rev ? merged : { ...old, replies: merged.replies }
}

/** Start once per page, from the script tag that loaded us. */
function boot(): void {
  if (window.Marginalia) return
  const script = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[src*="overlay.js"]')
  const server = serverFromScript(script)
  if (!server) {
    console.warn('Marginalia: could not tell which server this overlay came from; add data-server="http://127.0.0.1:4848" to its script tag.')
    return
  }
  const overlay = new Overlay(server)
  window.Marginalia = overlay
  const start = () => overlay.mount()
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true })
  else start()
}

if (typeof window !== 'undefined' && typeof document !== 'undefined') boot()
