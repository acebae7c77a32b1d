/**
 * The overlay's controller. It builds the collaborators — page sync (the server side), picker,
 * composer, thread and list panels, pins, marks and the dock — and wires their events to each
 * other. Each collaborator owns its state and DOM; the controller owns only what spans them: which
 * panel is open (one at a time), where focus goes back to, and laying everything out in one frame.
 *
 * New parts go beside these as objects of their own: page capture (screenshots, console and
 * network) in `capture/`, the anchoring of pins in `pins.ts`, toolbar settings in `settings.ts`.
 */
import { BrowserAuth, type Auth } from '../shared/auth.js'
import { Api, type Transport } from '../shared/api.js'
import { h } from '../shared/dom.js'
import type { Annotation } from '../shared/types.js'
import { Composer } from './composer.js'
import { describeElement } from './describe.js'
import { Dock } from './dock.js'
import { FrameLayout, coarsePointer, onViewportChange, placeDock, placePanel } from './layout.js'
import { ListPanel } from './list-panel.js'
import { Marks } from './marks.js'
import { Outbox, Sender, waitingOn } from './outbox.js'
import { PageSync } from './page-sync.js'
import { Picker, type Target } from './picker.js'
import { Follower } from './anchor/follow.js'
import { TopLayer } from './top-layer.js'
import { CspWatch, adoptStyles } from './csp.js'
import { viewRect } from './anchor/dom.js'
import { Pins, isWaiting } from './pins.js'
import { PageSessions } from './sessions.js'
import { Settings, browserStorage } from './settings.js'
import OVERLAY_CSS from './overlay.css'
import { ThreadPanel } from './thread-panel.js'
import { sending, type Sending } from './sending.js'
import type { Links } from '../shared/links.js'
import { installPageLog, pageLogEnabled, type PageLogHandle } from '../early/page-log.js'
import { SettingsMenu } from './settings-menu.js'
import { Freezer, freezeButton } from './freeze.js'
import { DEFAULT_SHORTCUT, FrameKeys, PINS_SHORTCUT, overlayKeyListener, parseShortcut, type Shortcut } from './shortcuts.js'
import { allAsMarkdown, copyText, oneAsMarkdown } from './copy.js'
import { SignIn } from './sign-in.js'
import { FocusReturn } from './focus.js'
import { answerCapture } from './capture-requests.js'
import { Pointing } from './point.js'

/** What the script tag (or the Vite plugin) configures. */
export interface OverlayOptions {
  /** The annotate shortcut, e.g. `Alt+Shift+A` (the default) or `Ctrl+Alt+M`. */
  shortcut?: string | undefined
  /** How long an annotation's screenshot may take (capture and upload), ms; default 1 000. */
  screenshotBudgetMs?: number | undefined
  /** Set by the browser extension: how requests reach the server, whose session they carry, where "Sign in" leads, and the screenshot it draws. */
  transport?: Transport
  auth?: Auth
  openSignIn?: () => void
  capture?: ((box: DOMRect, exclude?: Element) => Promise<Blob | undefined>) | undefined
}

/** Events that stay inside the overlay: the page's shortcuts must not fire while the person writes, and its "click outside" handlers must not see our clicks. */
const CONTAINED = ['keydown', 'keyup', 'keypress', 'input', 'click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'contextmenu', 'focusin', 'focusout', 'wheel'] as const

export class Overlay {
  readonly api: Api
  private readonly auth: Auth
  private readonly signIn: SignIn
  /** Every window listener added by mount(), removed at once by destroy(). */
  private readonly listening = new AbortController()
  readonly outbox: Outbox
  private readonly sender: Sender
  readonly sync: PageSync
  readonly host = document.createElement('marginalia-overlay')
  /** What the page logged (console errors, failed requests), unless turned off for this origin. */
  pageLog: PageLogHandle | undefined
  private readonly shadow = this.host.attachShadow({ mode: 'open' })
  private readonly picker: Picker
  private readonly marks = new Marks()
  private readonly pins: Pins
  readonly composer: Composer
  private readonly thread: ThreadPanel
  private readonly list: ListPanel
  readonly dock: Dock
  private readonly follower: Follower
  private readonly topLayer: TopLayer
  private readonly csp: CspWatch
  private hovered: Element | undefined
  /** Pins, marks and panels laid out at most once a frame. */
  private readonly layout = new FrameLayout(() => this.positionAll())
  private readonly schedulePosition = this.layout.schedule
  private locationTimer: ReturnType<typeof setInterval> | undefined
  private readonly focusBack = new FocusReturn(this.shadow)
  private destroyed = false
  /** The toolbar's settings: theme, resolved pins, all pins hidden, capture defaults. */
  private readonly menu: SettingsMenu
  private readonly freezer: Freezer
  private readonly shortcut: Shortcut
  private readonly onKeyDown: (e: KeyboardEvent) => void
  private readonly frameKeys: FrameKeys
  private readonly sending: Sending
  /** Where the thread's images and source links point. */
  private readonly links: Links
  /** An agent's question the person answers by pointing at an element. */
  private readonly pointing: Pointing

  constructor(
    readonly server: string,
    readonly options: OverlayOptions = {},
  ) {
    const shortcut = parseShortcut(options.shortcut)
    if (options.shortcut && !shortcut) console.warn(`Marginalia: data-shortcut="${options.shortcut}" is not a shortcut (e.g. Alt+Shift+A, Ctrl+Alt+M); using ${DEFAULT_SHORTCUT}.`)
    this.shortcut = shortcut ?? parseShortcut(DEFAULT_SHORTCUT)!
    this.links = { attachments: server, editor: {} }
    this.pageLog = pageLogEnabled() ? installPageLog(window, (url) => url.startsWith(server)) : undefined
    this.host.setAttribute('data-marginalia', '')
    const storage = browserStorage()
    const settings = new Settings(storage)
    this.auth = options.auth ?? new BrowserAuth(`marginalia.session@${server}`)
    this.api = new Api(server, 10_000, this.auth, options.transport)
    this.outbox = new Outbox(storage, `marginalia:outbox:${server}`)
    const sessions = new PageSessions(this.api, storage, `marginalia:session:${server}:`, (pageKey, session) => this.sync.adopt(pageKey, session))
    this.sync = new PageSync(this.api, sessions, {
      // Source locations in the thread link to the editor once the server says where the project is.
      health: (health) => {
        this.links.editor = health
      },
      changed: () => this.renderAll(),
      presence: () => this.dock.renderAgent(),
      status: () => {
        this.dock.renderAgent()
        this.dock.renderAlert()
      },
      loaded: () => void this.sender.flush(),
      back: () => this.sender.retrySoon(),
      agentReplied: (a, reply) => {
        if (reply.kind === 'question' && reply.point) return this.pointing.start(a, reply)
        if (this.thread.openId !== a.id) this.dock.say(reply.kind === 'question' ? `The agent asks about #${this.sync.numberOf(a.id)}` : `The agent replied on #${this.sync.numberOf(a.id)}`)
      },
      removed: (id, how) => {
        if (this.thread.openId !== id) return
        this.closeThread()
        this.dock.say(`That annotation was ${how}.`)
      },
      captureRequested: (e) =>
        void answerCapture(e, {
          api: this.api,
          host: this.host,
          get: (id) => this.sync.get(id),
          anchor: (a) => {
            this.pins.anchors.forget(a.id)
            return this.pins.anchors.of(a)
          },
          looked: (a) => this.dock.say(e.attachTo === undefined ? `The agent looked at #${this.sync.numberOf(a.id)}.` : `#${this.sync.numberOf(a.id)} resolved: its "after" picture is in the thread.`),
        }).catch(() => {}), // nothing to tell the person: the agent hears the timeout
    })
    this.sender = new Sender(
      this.api,
      this.outbox,
      sessions,
      {
        sent: (item, annotation, sessionId) => this.sending.sent(item, annotation, sessionId),
        blocked: () => {
          this.sync.setReachable(false)
          this.dock.renderAlert()
          this.renderList()
        },
        drained: () => this.dock.renderAlert(),
        rejected: (_item, error) => {
          this.dock.say(`An annotation could not be sent: ${error}`)
          this.dock.renderAlert()
          this.renderPins()
          this.renderList()
        },
      },
      { lockName: `marginalia-outbox:${server}` },
    )
    this.picker = new Picker(this.host, {
      pick: (target, add) => this.openComposer(add ? this.composer.withMore(target) : target),
      dragging: (rect) => this.marks.drag(rect),
      hover: (element) => {
        if (element === this.hovered) return
        this.hovered = element
        this.schedulePosition()
      },
      changed: (on) => {
        this.dock.setAnnotating(on)
        if (on) this.dock.say(coarsePointer() ? 'Tap an element or select text to annotate it. Tap Annotate again to stop.' : 'Click an element or select text to annotate it. Esc to stop.')
      },
      composing: () => this.composer.target !== undefined,
    })
    this.pins = new Pins(
      this.host,
      // A pin of an annotation still in the outbox opens the list, where it waits (retry, copy, discard).
      (id) => (isWaiting(id) ? this.toggleList(true) : this.thread.openId === id ? this.closeThread() : this.open(id)),
      (anchor) => this.follower.track(anchor.element!, anchor.clip),
    )
    // Pins follow their elements at once: page changes, resizes, scrolls, client-side navigation.
    this.follower = new Follower(
      {
        changed: () => {
          this.pins.forget()
          this.layout.now()
        },
        moved: () => this.schedulePosition(),
        navigated: () => this.checkLocation(),
      },
      this.host,
    )
    // Above the page's modal dialogs, popovers and z-index 2147483647 furniture (the top layer).
    this.topLayer = new TopLayer(this.host, () => this.schedulePosition())
    this.composer = new Composer({
      send: (body, extras) => (this.pointing.active ? void this.pointing.answer(body, extras.target) : this.sending.send(body, extras)),
      pageLog: (on) => this.startPageLog(on),
      closed: (restoreFocus) => {
        this.schedulePosition()
        if (restoreFocus) this.focusBack.restore()
      },
    })
    this.thread = new ThreadPanel(this.shadow, {
      reply: async (id, message, attachments) => this.update(await this.api.reply(id, message, attachments)),
      reopen: async (id, message) => {
        this.update(await this.api.reopen(id, message))
        this.dock.say(`#${this.sync.numberOf(id)} is pending again.`)
      },
      remove: async (id) => {
        const n = this.sync.numberOf(id)
        await this.api.remove(id)
        this.sync.forget(id)
        this.closeThread()
        this.renderAll()
        this.dock.say(`#${n} deleted.`)
      },
      close: () => this.closeThread(),
      copy: (a) => void this.copy(oneAsMarkdown(a, this.sync.numberOf(a.id)), `Copied #${this.sync.numberOf(a.id)} as Markdown.`),
      unreachable: () => this.sync.setReachable(false),
    }, this.api, this.links)
    this.list = new ListPanel(server, {
      open: (id) => this.open(id),
      close: () => this.toggleList(false),
      discard: (item) => {
        this.outbox.remove(item.id)
        this.renderPins()
        this.renderList()
        this.dock.renderAlert()
      },
      retry: () => this.sender.retrySoon(),
      onPage: (a) => this.pins.elementOf(a) !== null,
      copyAll: () => void this.copy(allAsMarkdown(this.sync.ordered()), `Copied ${this.sync.ordered().length} annotation${this.sync.ordered().length === 1 ? '' : 's'} as Markdown.`),
    }, this.shortcut.text)
    this.dock = new Dock(server, this.sync, () => this.outbox.list(), settings, {
      annotatePress: () => this.picker.remember(),
      annotateClick: () => this.picker.toggleRemembered(),
      toggleList: (open) => this.toggleList(open),
      retry: () => {
        this.sync.retry()
        this.sender.retrySoon()
      },
      resized: () => this.schedulePosition(),
      collapsed: () => this.renderPins(),
      signIn: () => this.signIn.open(),
      signOut: () => void this.signIn.signOut(),
    })
    this.dock.setShortcut(this.shortcut.text)
    this.signIn = new SignIn(server, this.api, this.auth, {
      say: (text) => this.dock.say(text),
      render: (needed, name) => this.dock.renderWho(needed, name),
      restart: () => {
        this.sync.stop()
        this.sync.start()
        this.sender.retrySoon()
      },
      stop: () => this.sync.stop(),
    }, options.openSignIn)

    // A strict Content-Security-Policy: styles that style-src does not govern, and a clear word on what it blocks.
    adoptStyles(this.shadow, OVERLAY_CSS)
    this.csp = new CspWatch(server, (message) => this.dock.setBlocked(message))
    const root = h('div', { class: 'mg' }, this.marks.words, this.pins.element, this.marks.highlight, this.marks.outline, this.marks.band, this.picker.shields, this.composer.element, this.thread.element, this.list.element, this.dock.element)
    this.shadow.append(root)
    for (const type of CONTAINED) root.addEventListener(type, (e) => e.stopPropagation())

    // The settings menu (theme, resolved pins), freezing the page, keys in iframes.
    this.menu = new SettingsMenu(settings, {
      changed: () => this.renderPins(),
      pageLog: (on) => this.startPageLog(on),
    }, root)
    this.pins.shows = (a, openId) => this.menu.shows(a, openId)
    this.freezer = new Freezer(this.host)
    this.dock.extend([freezeButton(this.freezer, (text) => this.dock.say(text)), this.menu.button], [this.menu.element])
    this.onKeyDown = overlayKeyListener(this.shortcut, {
      toggleAnnotate: () => this.picker.toggle(),
      togglePins: () => {
        this.menu.setPinsHidden(!this.menu.pinsHidden)
        this.dock.say(this.menu.pinsHidden ? `Pins hidden (${PINS_SHORTCUT} shows them).` : 'Pins shown.')
      },
      escape: () => this.escape(),
      pickFocused: (e) => this.picker.pickFocused(e),
    })
    this.frameKeys = new FrameKeys(this.onKeyDown)
    this.sending = sending(this)
    this.pointing = new Pointing({
      api: this.api,
      host: this.host,
      budgetMs: options.screenshotBudgetMs,
      annotate: () => this.picker.set(true),
      say: (text) => this.dock.say(text),
      answered: (a) => {
        this.picker.set(false)
        this.update(a)
      },
    })
  }

  /** Turned on while off at load: the log starts now (it has nothing from before). */
  private startPageLog(on: boolean): void {
    if (on && !this.pageLog) this.pageLog = installPageLog(window, (url) => url.startsWith(this.server))
  }

  private async copy(markdown: string, done: string): Promise<void> {
    const ok = await copyText(markdown, this.shadow)
    this.dock.say(ok ? done : "Can't write to the clipboard on this page: copy from the inbox instead.")
  }

  // ------------------------------------------------------------------ life cycle and the public API

  mount(): void {
    const { signal } = this.listening
    this.csp.start()
    document.documentElement.appendChild(this.host)
    this.topLayer.start()
    window.addEventListener('keydown', this.onKeyDown, { capture: true, signal })
    this.frameKeys.start()
    this.picker.attach()
    onViewportChange(this.schedulePosition, signal)
    window.addEventListener('online', this.onOnline, { signal })
    window.addEventListener('storage', this.onStorage, { signal })
    // History changes are heard at once (the follower); this catches what no event announces.
    this.locationTimer = setInterval(() => this.checkLocation(), 1_000)
    this.follower.start()
    this.signIn.start(signal)
    this.renderAll()
    this.sync.start()
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.picker.detach()
    this.listening.abort()
    this.frameKeys.stop()
    this.freezer.unfreeze()
    this.menu.stop()
    clearInterval(this.locationTimer)
    this.follower.stop()
    this.layout.stop()
    this.sync.stop()
    this.dock.stop()
    this.sender.stop()
    this.topLayer.stop()
    this.csp.stop()
    this.host.remove()
  }

  get sessionId(): string | undefined {
    return this.sync.sessionId
  }

  annotate(on?: boolean): void {
    this.picker.set(on ?? !this.picker.active)
  }

  comment(element: Element): void {
    this.openComposer({ element, info: describeElement(element) })
  }

  flush(): Promise<void> {
    return this.sender.flush()
  }

  // ------------------------------------------------------------------ what the sync and the sender report

  /** A fresher copy from a response to the person's action. */
  private update(fresh: Annotation): void {
    this.sync.offer(fresh)
    this.renderAll()
  }

  private readonly onOnline = (): void => {
    this.sync.online()
    this.sender.retrySoon()
  }

  private readonly onStorage = (e: StorageEvent): void => {
    if (e.key !== this.outbox.key) return
    this.dock.renderAlert()
    this.renderPins()
    this.renderList()
  }

  private checkLocation(): void {
    const key = location.origin + location.pathname
    if (key === this.sync.pageKey) return
    // Client-side navigation: another page, another session (and its own numbers: the toast goes).
    this.dock.quiet()
    this.composer.close(false)
    this.closeThread()
    this.pins.forget()
    this.sync.navigate(key)
    this.renderAll()
  }

  // ------------------------------------------------------------------ keys, and one open panel at a time

  /** Close the innermost open thing; false when nothing was open. */
  private escape(): boolean {
    if (this.menu.isOpen) {
      this.menu.toggle(false)
      this.menu.button.focus()
    } else if (this.composer.target) this.composer.escape()
    else if (this.thread.openId !== undefined) this.closeThread()
    else if (this.list.isOpen) this.toggleList(false)
    else if (this.picker.active) this.picker.set(false)
    else return false
    return true
  }

  private openComposer(target: Target): void {
    const fresh = this.composer.target === undefined
    this.closeThread()
    this.toggleList(false)
    if (fresh) this.focusBack.rememberActive(this.dock.annotateButton)
    this.composer.open(target)
    this.hovered = undefined
    this.positionAll()
    this.composer.focus()
  }

  /** Open an annotation's thread (public: `window.Marginalia.open(id)`). */
  open(id: string): void {
    const a = this.sync.get(id)
    if (!a) return
    this.composer.close(false)
    this.toggleList(false)
    if (this.thread.openId === undefined) this.focusBack.rememberActive(this.dock.annotateButton)
    this.thread.open(a, this.sync.numberOf(id))
    this.renderPins()
    const el = this.pins.elementOf(a)
    if (el) {
      const r = viewRect(el)
      if (r.bottom < 0 || r.top > window.innerHeight) el.scrollIntoView({ block: 'center', behavior: 'smooth' })
    }
    this.thread.focus(a)
  }

  private closeThread(): void {
    if (this.thread.openId === undefined) return
    this.thread.close()
    this.renderPins()
    this.focusBack.restore()
  }

  private toggleList(open = !this.list.isOpen): void {
    if (open === this.list.isOpen) return
    this.dock.setListOpen(open)
    if (open) {
      this.composer.close(false)
      this.closeThread()
      this.focusBack.remember(this.dock.countButton)
      this.list.open()
      this.renderList()
      this.list.element.focus()
    } else {
      this.list.close()
    }
  }

  // ------------------------------------------------------------------ rendering and layout

  renderAll(): void {
    this.pins.element.hidden = this.menu.pinsHidden || this.dock.collapsed
    this.pins.render(this.sync.ordered(), this.thread.openId, waitingOn(this.outbox, this.sync.pageKey))
    this.dock.renderCount(this.sync.ordered())
    this.dock.renderAgent()
    const id = this.thread.openId
    const a = id === undefined ? undefined : this.sync.get(id)
    if (a) this.thread.render(a, this.sync.numberOf(a.id))
    else this.closeThread()
    this.renderList()
    this.dock.renderAlert()
  }

  renderPins(): void {
    this.pins.element.hidden = this.menu.pinsHidden || this.dock.collapsed
    this.pins.render(this.sync.ordered(), this.thread.openId, waitingOn(this.outbox, this.sync.pageKey))
    this.positionAll()
  }

  private renderList(): void {
    if (this.list.isOpen) this.list.render(this.sync.ordered(), this.outbox.list())
    this.positionAll()
  }

  /** Pins on their elements, the highlight on the hovered element, panels beside what they belong to. */
  private positionAll(): void {
    if (this.destroyed) return
    const openPin = this.pins.position([...this.sync.ordered(), ...waitingOn(this.outbox, this.sync.pageKey)], this.thread.openId)
    this.picker.layout()
    placeDock(this.dock.element, this.host)
    this.marks.hover(this.picker.active && !this.composer.target && this.hovered?.isConnected ? this.hovered : undefined, '  ↑↓ parent')
    const reserve = this.dock.reserve()
    // Dashed outlines on what the open box or thread is about; the selected words marked.
    const outlined = this.composer.place(reserve)
    let words: DOMRect[] = []
    const id = this.thread.openId
    if (id !== undefined) {
      const a = this.sync.get(id)
      const placed = this.thread.place(a ? this.pins.anchors.of(a) : undefined, openPin, reserve)
      outlined.push(...placed.outlined)
      words = placed.words
    }
    this.marks.outlineAround(outlined)
    this.marks.mark(words)
    if (this.list.isOpen) placePanel(this.list.element, undefined, reserve)
  }
}
