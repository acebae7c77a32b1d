/**
 * The overlay's composition root. It builds the collaborators a page needs before the person acts
 * — page sync (the server side), the outbox's sender, pins, the dock and its menu — hands each the
 * events it reports to, and mounts and removes the whole. Annotate mode and the panels (picker,
 * marks, composer, pointing, thread and list panels) come in the `annotate` chunk
 * (chunks/annotate.ts), fetched when the person shows the intent to act ({@link Overlay.withUi}). What spans them lives in
 * modules of its own: which panel is open and where focus goes back (`panels.ts`), drawing and
 * laying out in one frame (`render.ts`), where the live stream's reports go (`stream-events.ts`),
 * what the person does in a thread or the list (`actions.ts`), sending (`sending.ts`), the page log
 * and the steps' recorder (`recorders.ts`).
 *
 * The parts live in rooms (docs/ARCHITECTURE.md has the map): `sync/` (the server and the
 * outbox), `views/` (what is drawn), `annotate/` (picking and writing), `capture/`, `anchor/`,
 * `source/`, `page/` (the host page: its CSP, keys, top layer, storage).
 */
import { BrowserAuth, type Auth } from '../shared/auth.js'
import { Api, type ExpectedServer, type Transport } from '../shared/api.js'
import { h } from '../shared/dom.js'
import type { Links } from '../shared/links.js'
import type { PageLogHandle } from '../early/page-log.js'
import type { StepsHandle } from '../early/steps.js'
import { Recorders } from './recorders.js'
import { Follower } from './anchor/follow.js'
import { INTENDED, complete, load, prefetchWhenIdle, rememberUse, usedBefore } from './chunks/load.js'
import { CspWatch, adoptStyles } from './page/csp.js'
import { Dock } from './views/dock.js'
import { freezeButton } from './page/freeze-button.js'
import { onViewportChange } from './views/layout.js'
import { LazySender, Outbox, isWaiting, type OutboxSender } from './sync/outbox.js'
import { watchPermissionPrompts, type PromptsWatch } from './permission-watch.js'
import { sharedLive, type SharedLive } from '../shared/shared-live.js'
import OVERLAY_CSS from './overlay.css'
import { PageSync } from './sync/page-sync.js'
import { Pins } from './views/pins.js'
import { Renderer } from './render.js'
import { Hold } from './page/hold.js'
import { selectedRange } from './page/selection.js'
import { sending, type Sending } from './sending.js'
import { PageSessions } from './sync/sessions.js'
import { Settings, browserStorage } from './page/settings.js'
import { SettingsMenu } from './views/settings-menu.js'
import { DEFAULT_SHORTCUT, FrameKeys, PINS_SHORTCUT, overlayKeyListener, parseShortcut } from './page/shortcuts.js'
import { SignIn } from './sync/sign-in.js'
import { streamEvents } from './stream-events.js'
import { TopLayer } from './page/top-layer.js'
import type { UiParts } from './ui-parts.js'
import { whenLoadedAndIdle } from './page/after-load.js'
import { hostEntry } from './page/host-entry.js'

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
  /** Typed values in the steps to reproduce: masked (true), kept (false), or by origin (undefined: masked unless a local dev origin). */
  maskInputs?: boolean | undefined
  /**
   * When the chunks (chunks/load.ts) are fetched: on intent (the default: the pointer on the
   * toolbar, Annotate focused or pressed), when the browser is idle after load (`'idle'`), or only
   * on first use (`false`).
   */
  prefetch?: 'intent' | 'idle' | false | undefined
  /** The project this page belongs to (`data-store`, `data-project` on the script tag): a server of another project's store gets nothing. */
  expect?: ExpectedServer
}

/** Events that stay inside the overlay: the page's shortcuts must not fire while the person writes, and its "click outside" handlers must not see our clicks. */
const CONTAINED = ['keydown', 'keyup', 'keypress', 'input', 'click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'contextmenu', 'focusin', 'focusout', 'wheel'] as const

/**
 * Its parts are read-only fields, most of them public: the modules beside it (render, panels,
 * stream-events, actions, sending) take the overlay itself and read the parts they name when they
 * run. `window.Marginalia` offers none of them (public-api.ts).
 */
export class Overlay {
  readonly api: Api
  private readonly signIn: SignIn
  /** Every window listener added by mount(), removed at once by destroy(). */
  private readonly listening = new AbortController()
  readonly outbox: Outbox
  /** The outbox's sender, fetched (the `sender` chunk) when something waits in the outbox. */
  readonly sender: OutboxSender
  readonly sync: PageSync
  readonly host = document.createElement('marginalia-overlay')
  /** The page log and the steps' recorder (recorders.ts). */
  private readonly recorders: Recorders
  readonly shadow = this.host.attachShadow({ mode: 'open' })
  /** Annotate mode and the panels, once the `annotate` chunk has come (withUi). */
  ui: UiParts | undefined
  readonly pins: Pins
  readonly dock: Dock
  /** The toolbar's settings: theme, resolved pins, all pins hidden, capture defaults. */
  readonly menu: SettingsMenu
  /** What the overlay remembers in this browser (this site's storage). */
  private readonly settings: Settings
  /** Pins, marks and panels drawn, and laid out at most once a frame. */
  readonly render = new Renderer(this, () => this.ui?.panels.closeThread())
  /** Where the thread's images and source links point. */
  readonly links: Links
  readonly follower: Follower
  /** Where Send goes (sending.ts). */
  readonly outgoing: Sending
  /** The annotation as sent, with its source and extras (the `extras` chunk). */
  readonly complete = complete
  /** The annotate shortcut as the list's hint writes it. */
  readonly shortcutText: string
  /** The overlay's root element in its shadow root (the chunk's parts go into it). */
  private readonly root: HTMLElement
  /** The annotate chunk asked for and its parts being built. */
  private uiLoading: Promise<UiParts> | undefined
  /** The page's selection as the Annotate button was pressed (the click clears it). */
  private pressedRange: Range | undefined
  /** Annotate mode turned on with its chunk on the way: the page's clicks held until it comes. */
  private hold: Hold | undefined
  private readonly topLayer: TopLayer
  private readonly csp: CspWatch
  private locationTimer: ReturnType<typeof setInterval> | undefined
  private destroyed = false
  /** The host enters the page once the server has answered (page/host-entry.ts); drawn already, it is placed in the next frame, with no layout read now. */
  private readonly entry = hostEntry(this.host, () => {
    this.topLayer.start()
    this.render.schedule()
  })
  /** The panels' stylesheet (chunks/ui.ts): asked for, or adopted. */
  private uiStyles: 'none' | 'asked' | 'adopted' = 'none'
  /** The agent's permission prompts (permission-watch.ts: mounted when there is a request). */
  private permissions: PromptsWatch | undefined
  /** The live connection shared with the app's other tabs, where the browser can share one. */
  private readonly shared: SharedLive | undefined
  private readonly onKeyDown: (e: KeyboardEvent) => void
  private readonly frameKeys: FrameKeys

  constructor(
    readonly server: string,
    readonly options: OverlayOptions = {},
  ) {
    const given = parseShortcut(options.shortcut)
    if (options.shortcut && !given) console.warn(`Marginalia: data-shortcut="${options.shortcut}" is not a shortcut (e.g. Alt+Shift+A, Ctrl+Alt+M); using ${DEFAULT_SHORTCUT}.`)
    const shortcut = given ?? parseShortcut(DEFAULT_SHORTCUT)!
    this.links = { attachments: server, editor: {} }
    this.recorders = new Recorders((url) => url.startsWith(server), options.maskInputs)
    this.host.setAttribute('data-marginalia', '')
    const storage = browserStorage()
    const settings = (this.settings = new Settings(storage))
    const auth = options.auth ?? new BrowserAuth(`marginalia.session@${server}`)
    this.api = new Api(server, 10_000, auth, options.transport)
    if (options.expect) this.api.expectServer(options.expect)
    this.outbox = new Outbox(storage, `marginalia:outbox:${server}`)
    const sessions = new PageSessions(this.api, storage, `marginalia:session:${server}:`, (pageKey, session) => this.sync.adopt(pageKey, session))
    const events = streamEvents(this)
    // The server's /health, asked once by the page sync, also says whether sign-in is offered.
    this.shared = sharedLive(server, this.api, options.transport)
    // The first answer of the server (or its failure) puts the toolbar in the page, already saying it.
    this.sync = new PageSync(this.api, sessions, {
      ...events,
      health: (health) => {
        events.health(health)
        this.signIn.heard(health)
      },
      // After the agent's presence is drawn: the toolbar goes in saying it.
      status: () => {
        events.status()
        this.entry.enter()
      },
    }, this.shared)
    this.shortcutText = shortcut.text
    this.pins = new Pins(
      this.host,
      // A pin of an annotation still in the outbox opens the list, where it waits (retry, copy, discard).
      (id) => this.withUi((ui) => (isWaiting(id) ? ui.panels.toggleList(true) : ui.thread.openId === id ? ui.panels.closeThread() : ui.panels.open(id))),
      (anchor) => this.follower.track(anchor.element!, anchor.clip),
    )
    // Pins follow their elements at once: page changes, resizes, scrolls, client-side navigation.
    this.follower = new Follower(
      {
        changed: () => {
          this.pins.forget()
          this.render.now()
        },
        moved: () => this.render.schedule(),
        navigated: () => this.checkLocation(),
      },
      this.host,
    )
    // Above the page's modal dialogs, popovers and z-index 2147483647 furniture (the top layer).
    this.topLayer = new TopLayer(this.host, () => this.render.schedule())
    this.dock = new Dock(server, this.sync, () => this.outbox.list(), settings, {
      intent: () => this.intent(),
      annotatePress: () => {
        this.pressedRange = selectedRange()
        this.intent()
      },
      annotateClick: () => {
        const range = this.pressedRange
        this.pressedRange = undefined
        this.turnOn((ui) => ui.picker.toggleFrom(range))
      },
      toggleList: (open) => this.withUi((ui) => ui.panels.toggleList(open)),
      retry: () => {
        this.sync.retry()
        this.sender.retrySoon()
      },
      resized: () => this.render.schedule(),
      collapsed: () => this.render.pins(),
      signIn: () => this.signIn.open(),
      signOut: () => void this.signIn.signOut(),
    })
    this.dock.setShortcut(shortcut.text)
    // Sending says what happens in the toolbar: made once the dock is there.
    this.outgoing = sending(this)
    this.sender = new LazySender(
      this.outbox,
      () => load('sender').then((chunk) => new chunk.Sender(this.api, this.outbox, sessions, this.outgoing, { lockName: `marginalia-outbox:${server}` })),
      this.outgoing,
    )
    this.signIn = new SignIn(server, this.api, auth, {
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
    this.csp = new CspWatch(server, (message) => {
      this.dock.setBlocked(message)
      this.entry.enter()
    })
    // The annotate chunk puts its parts in: its marks under the pins, its panels under the dock.
    const root = h('div', { class: 'mg' }, this.pins.element, this.dock.element)
    this.root = root
    this.shadow.append(root)
    for (const type of CONTAINED) root.addEventListener(type, (e) => e.stopPropagation())

    // The settings menu (theme, resolved pins), freezing the page, keys in iframes.
    this.menu = new SettingsMenu(settings, {
      changed: () => this.render.pins(),
      pageLog: (on) => this.startPageLog(on),
      // The menu is drawn by the `ui` chunk, whose sheet is adopted first (styleUi's callback comes first).
      view: () => {
        this.styleUi()
        return load('ui').then((ui) => ui.settingsView)
      },
      place: (element) => this.dock.extend([], [element]),
      failed: () => this.dock.say('Could not load the settings from the Marginalia server: is it running? Try again.'),
    }, root)
    this.pins.shows = (a, openId) => this.menu.shows(a, openId)
    const freeze = freezeButton((done) => this.withUi((ui) => done(ui.freezer.toggle())), (text) => this.dock.say(text))
    this.dock.extend([freeze, this.menu.button])
    this.onKeyDown = overlayKeyListener(shortcut, {
      toggleAnnotate: () => {
        const range = selectedRange()
        this.turnOn((ui) => ui.picker.toggleFrom(range))
      },
      togglePins: () => {
        this.menu.setPinsHidden(!this.menu.pinsHidden)
        this.dock.say(this.menu.pinsHidden ? `Pins hidden (${PINS_SHORTCUT} shows them).` : 'Pins shown.')
      },
      escape: () => {
        // Annotate mode still coming: it does not turn on.
        if (this.hold) return this.cancelTurnOn()
        // The settings menu is the core's; what else Esc closes is annotate mode's.
        if (!this.menu.isOpen) return this.ui?.panels.escape() ?? false
        this.menu.toggle(false)
        this.menu.button.focus()
        return true
      },
      pickFocused: (e) => (this.ui ? this.ui.picker.pickFocused(e) : (this.hold?.enter(e) ?? false)),
    })
    this.frameKeys = new FrameKeys(this.onKeyDown)
  }

  /**
   * Act with annotate mode and the panels: at once when their chunk is here, else once it has come
   * (fetched now if the intent prefetch has not). When it cannot be fetched, the dock says so and
   * the next use asks again.
   */
  withUi(act: (ui: UiParts) => void): void {
    this.entry.enter()
    if (this.ui) return act(this.ui)
    this.uiLoading ??= load('annotate').then((chunk) => {
      if (this.destroyed) throw new Error('removed')
      this.ui ??= chunk.createUi(this, this.root)
      rememberUse(this.settings)
      return this.ui
    })
    this.uiLoading.then(
      (ui) => act(ui),
      () => {
        this.uiLoading = undefined
        this.cancelTurnOn()
        if (!this.destroyed) this.dock.say('Could not load annotate mode from the Marginalia server: is it running? Try again.')
      },
    )
  }

  /**
   * Turn annotate mode on (`act`): at once when it is here; else the page's clicks are held until
   * it comes (page/hold.ts), and what the person clicked meanwhile is picked then.
   */
  private turnOn(act: (ui: UiParts) => void): void {
    this.entry.enter()
    if (this.ui) return act(this.ui)
    const hold = (this.hold ??= new Hold(this.host))
    // The held presses are annotate mode's, not steps to reproduce.
    this.steps?.pause(true)
    this.withUi((ui) => {
      if (this.hold !== hold) return // Esc, or removed, meanwhile
      this.hold = undefined
      const held = hold.release()
      act(ui)
      this.steps?.pause(ui.picker.active)
      if (held && ui.composer.target === undefined) ui.picker.pickHeld(held)
      else if (hold.hovered) ui.picker.hoverHeld(hold.hovered)
    })
  }

  /** Annotate mode asked for and still coming: not turned on after all (true when it was coming). */
  private cancelTurnOn(): boolean {
    const hold = this.hold
    this.hold = undefined
    hold?.release()
    if (hold) this.steps?.pause(false)
    return hold !== undefined
  }

  /** The person is about to act (the pointer on the toolbar, Annotate focused or pressed): what annotate mode needs is fetched now. */
  private intent(): void {
    if (this.options.prefetch === false) return
    for (const name of INTENDED) load(name).catch(() => {}) // fetched again on use
  }

  /** Above the page's top layer again (annotate mode has started: a dialog or popover may have opened since); `walk`: the page's shadow roots looked through first. */
  raiseTopLayer(walk?: boolean): void {
    this.topLayer.raise(walk)
  }

  /** Fetch what Send needs (annotate mode has started). */
  warmExtras(): void {
    void load('extras').catch(() => {}) // fetched again at Send
  }

  /**
   * The panels' stylesheet (ui.css, in the `ui` chunk), adopted after the core sheet once it has
   * loaded: asked for when a panel, the menu or annotate mode opens and when the browser is idle.
   * A panel opened before it arrives works at once and takes its looks a moment later; when the
   * chunk cannot be fetched, the next opening asks again.
   */
  readonly styleUi = (): void => {
    if (this.uiStyles !== 'none') return
    this.uiStyles = 'asked'
    load('ui').then(
      (ui) => {
        if (this.destroyed || this.uiStyles === 'adopted') return
        this.uiStyles = 'adopted'
        adoptStyles(this.shadow, ui.css)
        // Panels opened before it came are laid out again at their styled size.
        this.render.schedule()
      },
      () => {
        this.uiStyles = 'none'
      },
    )
  }

  // ------------------------------------------------------------------ life cycle and the public API

  mount(): void {
    const { signal } = this.listening
    this.csp.start()
    this.entry.start()
    this.recorders.listenKeys(this.onKeyDown)
    this.frameKeys.start()
    onViewportChange(this.render.schedule, signal)
    window.addEventListener('online', this.onOnline, { signal })
    window.addEventListener('storage', this.onStorage, { signal })
    // History changes are heard at once (the follower); without the Navigation API (which hears
    // every same-document navigation), this catches what no event announces.
    if (!('navigation' in window)) this.locationTimer = setInterval(() => this.checkLocation(), 1_000)
    this.follower.start()
    this.signIn.start(signal)
    this.render.all()
    // The live connection, with the watch for the agent's permission requests on it, once the page
    // has loaded and the browser is idle: the page's load is not slowed by the overlay's requests.
    // Nothing is missed meanwhile: the annotations are loaded first, the stream resumes from there.
    // Not through the extension: its service worker carries no answer to a prompt (the site's page
    // is not trusted with one), and refuses a stream that asks for them.
    whenLoadedAndIdle(() => {
      if (!this.options.transport) this.permissions = watchPermissionPrompts(this.api, this.sync.permissionFeed, () => load('prompts'))
      this.sync.start()
    }, signal)
    if (this.options.prefetch === 'idle') prefetchWhenIdle(signal, this.styleUi)
    // Annotate mode's chunks, from the browser's cache, where it used them here before.
    else if (this.options.prefetch !== false && usedBefore(this.settings)) prefetchWhenIdle(signal, undefined, INTENDED)
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.render.stop()
    this.cancelTurnOn()
    this.ui?.stop()
    this.listening.abort()
    this.recorders.stop()
    this.frameKeys.stop()
    this.ui?.freezer.unfreeze()
    this.menu.stop()
    clearInterval(this.locationTimer)
    this.entry.stop()
    this.follower.stop()
    this.sync.stop()
    this.dock.stop()
    this.sender.stop()
    this.topLayer.stop()
    this.csp.stop()
    this.permissions?.stop()
    this.shared?.close()
    this.host.remove()
  }

  /** What the page logged (console errors, failed requests), unless turned off for this origin. */
  get pageLog(): PageLogHandle | undefined {
    return this.recorders.pageLog
  }

  /** The steps to reproduce (the early recorder's when it ran), unless turned off for this origin. */
  get steps(): StepsHandle | undefined {
    return this.recorders.steps
  }

  /** Turned on while off at load: the log starts now (it has nothing from before). */
  startPageLog(on: boolean): void {
    this.recorders.startPageLog(on)
  }

  get sessionId(): string | undefined {
    return this.sync.sessionId
  }

  annotate(on?: boolean): void {
    // Off with annotate mode never loaded: nothing to turn off.
    if (on === false && !this.ui) return
    this.turnOn((ui) => ui.picker.set(on ?? !ui.picker.active))
  }

  comment(element: Element): void {
    this.withUi((ui) => ui.comment(element))
  }

  /** Open an annotation's thread. */
  open(id: string): void {
    this.withUi((ui) => ui.panels.open(id))
  }

  flush(): Promise<void> {
    return this.sender.flush()
  }

  // ------------------------------------------------------------------ what the window reports

  private readonly onOnline = (): void => {
    this.sync.online()
    this.sender.retrySoon()
  }

  /** Another tab changed the outbox. */
  private readonly onStorage = (e: StorageEvent): void => {
    if (e.key !== this.outbox.key) return
    this.dock.renderAlert()
    this.render.pins()
    this.render.list()
  }

  private checkLocation(): void {
    const key = location.origin + location.pathname
    if (key === this.sync.pageKey) return
    // Client-side navigation: another page, another session (and its own numbers: the toast goes).
    this.dock.quiet()
    this.ui?.composer.close(false)
    this.ui?.panels.closeThread()
    this.pins.forget()
    this.sync.navigate(key)
    this.render.all()
  }
}
