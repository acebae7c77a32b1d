/**
 * Steps to reproduce: a rolling record of what the person does in the tab, from the page's first
 * moment — clicks (the target's role, accessible name, text, test id, a CSS selector and the row
 * it is in), the final value typed in a field per focus, options chosen, boxes ticked, forms sent,
 * the keys that act (Enter, Escape, Tab), route changes within the page (pushState, replaceState,
 * popstate, hash), full navigations in the tab (kept in sessionStorage across loads), the viewport's
 * size and scrolls (one step per run of scrolling). The last 5 minutes and at most 100 steps.
 *
 * Privacy by construction: nothing typed in a sensitive field (a password, an autocomplete card,
 * one-time-code, new/current-password field, a hidden input) or inside a masked region
 * (`[data-marginalia-mask]`, `[data-private]`, `.sensitive`) is ever read — such a step says only
 * that something was typed, and an element in a masked region is named by its role and selector,
 * never by its text. With `maskInputs` on (the default on origins that are not local dev origins)
 * no typed value is kept at all.
 *
 * Cheap: passive listeners called by the browser directly, each a few property reads and no
 * layout read; an event that makes a step (a click, a change, a submit) keeps only the element (and
 * a button's or link's words, unsquashed), which ./describe.ts names and locates when the steps are
 * read or saved, as a route's address is redacted then. Typing is heard by the keys that edit a
 * field (no `input` listener: a keystroke costs one `keydown` call) and by the field's `change`
 * (paste, autofill), its value read when its step is written (the next step, leaving the field —
 * `focusout`, heard once per field typed in —, its change). The first scroll of the document opens
 * a scroll step and later scroll calls return at once until the next step closes it, the position
 * read then, once; a run of resizes is one step, its size read when
 * the next step comes (the viewport's size at load too: the recorder starts without laying the
 * page out); no timer runs; the record is written to sessionStorage only when the page is hidden
 * or left.
 *
 * Who installs it, first one wins (as the page log, ./page-log.ts): the early recorder (`early.js`,
 * the head snippet's `loader.js`, the extension's page script), else the overlay when it mounts.
 * THE CONTRACT (stable across releases, like the page log's): `window[Symbol.for('marginalia.steps')]`
 * is an object with `version: 1`; `recent(): Step[]` — the steps since the page loaded in this tab
 * or since `mark()`, oldest first, in the store's `Step` shape (src/store/model.ts); `mark(): void`
 * — the person annotated, the next `recent()` starts here; `mask(on: boolean | undefined): void` —
 * the `maskInputs` setting (undefined: by origin), remembered for the tab; `pause(on: boolean): void`
 * — while the person picks what to annotate, their clicks and keys are the overlay's, not steps.
 */
import { LIMITS, STEP_KINDS } from '../../store/vocabulary.js'
import type { Step } from '../shared/types.js'
import { identify, locate, squash } from './describe.js'
import { isSensitiveElement, redactUrl } from './redact.js'
import { ACTIONABLE, edits, isTextField, pageElement, type TextField } from './steps-events.js'
import { isLocalDevOrigin } from './steps-settings.js'

const KEPT = LIMITS.steps
const WINDOW_MS = 5 * 60_000
const STORAGE_KEY = 'marginalia:steps'
const INSTALLED = Symbol.for('marginalia.steps')
const STEPS_VERSION = 1
const KEYS = new Set(['Enter', 'Escape', 'Tab'])
/** Input types a click acts with (any other input says what happened to it by its change). */
const CLICKED_INPUTS = /^(submit|button|reset|image)$/
/** Passive: the recorder never cancels what the person does, so the browser need not wait on it. */
const LISTEN: AddEventListenerOptions = { capture: true, passive: true }
const LISTEN_ONCE: AddEventListenerOptions = { capture: true, passive: true, once: true }

/** One capture listener on the window per event type (capture: it hears what the page stops). */
function listen<K extends keyof WindowEventMap>(win: Window, type: K, fn: (e: WindowEventMap[K]) => void): void {
  win.addEventListener(type, fn, LISTEN)
}

export interface StepsHandle {
  readonly version: typeof STEPS_VERSION
  recent(): Step[]
  mark(): void
  mask(on: boolean | undefined): void
  pause(on: boolean): void
}

/**
 * A step as kept: `at` in ms (an ISO string is made only when read); until the steps are read or
 * saved, `el` (the element it is about, described then) with `words` (its text when the person
 * acted, not squashed yet), and `raw` (its `url` is the page's own, redacted then).
 */
type Kept = Omit<Step, 'at'> & { at: number; el?: Element; words?: string; raw?: true }

/** An actionable element's words when the person acts (pressing it may change them): squashed when read unless long. */
function wordsOf(el: Element): string {
  const text = el.textContent ?? ''
  return text.length > 400 ? squash(text) : text
}


function fromStorage(raw: string | null): { steps: Kept[]; since: number; start?: string; mask?: boolean } | undefined {
  if (!raw) return undefined
  try {
    const data = JSON.parse(raw) as { steps?: unknown; since?: unknown; start?: unknown; mask?: unknown }
    const kinds = new Set<string>(STEP_KINDS)
    const steps = Array.isArray(data.steps) ? (data.steps as Kept[]).filter((s) => typeof s === 'object' && s !== null && kinds.has(s.kind) && typeof s.at === 'number') : []
    return { steps, since: typeof data.since === 'number' ? data.since : 0, ...(typeof data.start === 'string' ? { start: data.start } : {}), ...(typeof data.mask === 'boolean' ? { mask: data.mask } : {}) }
  } catch {
    return undefined
  }
}

class StepLog implements StepsHandle {
  readonly version = STEPS_VERSION
  private steps: Kept[] = []
  private since = 0
  /** Where the page was when `mark()` was called: where the next steps start. */
  private start: string | undefined
  private maskSetting: boolean | undefined
  /** The overlay's picker is on: nothing the person does is a step of the page. */
  paused = false

  /** An event that makes no step: the page's own (untrusted), or the person's while the picker is on. */
  ignores(e: Event): boolean {
    return !e.isTrusted || this.paused
  }
  /** Some steps still hold their element or the page's own address (see `Kept`): `describe` has work. */
  private undescribed = false
  /** A run of scrolling (or resizing) is under way: its step takes the final position when the next step comes or the steps are read. */
  private scrolling: Kept | undefined
  private resizing: Kept | undefined
  /**
   * The viewport's size at this load is still to be read: it is read when the next step comes or
   * the steps are read, never as the recorder starts (reading it then lays the page out).
   */
  private viewportUnread = false
  /** The field typed in during its current focus, and the step that says so once written. */
  private typing: { el: TextField; step: Kept | undefined; dirty: boolean } | undefined

  constructor(
    private readonly win: Window,
    /** The page's address as a step may keep it (redacted and clipped). */
    private readonly redact: (url: string) => string,
    private readonly now: () => number = Date.now,
    /** Called when a field is first typed in: its leaving (`focusout`) is to be heard, once. */
    private readonly awaitBlur: () => void = () => {},
  ) {
    this.localOrigin = isLocalDevOrigin(win.location.href)
  }

  /** A document's origin never changes: whether it is a local dev origin is decided once. */
  private readonly localOrigin: boolean

  private get masking(): boolean {
    return this.maskSetting ?? !this.localOrigin
  }

  /** Adds `step` (a new object, kept as it is: it takes its time here). */
  push(step: Omit<Kept, 'at'>): Kept {
    if (this.scrolling || this.resizing || this.viewportUnread) this.settle()
    const kept = step as Kept
    kept.at = this.now()
    this.steps.push(kept)
    if (this.steps.length > KEPT * 2) this.prune()
    return kept
  }

  /**
   * A step about `el`, described when the steps are read or saved — never on the person's click
   * (the one thing read now: the words of a button or link, which pressing it may change).
   */
  act(step: Omit<Kept, 'at' | 'target' | 'el' | 'words'>, el: Element, words = false): Kept {
    const kept = step as Kept
    kept.el = el
    if (words) kept.words = wordsOf(el)
    this.undescribed = true
    return this.push(kept)
  }

  /** A step at the page's address of now: the address is redacted (and clipped) when the steps are read or saved. */
  address(kind: 'navigate' | 'route', url: string): void {
    this.undescribed = true
    this.push({ kind, url, raw: true })
  }

  /** A scroll step is open: more scrolling only moves it (its position is read once, when the next step closes it). */
  get scrollOpen(): boolean {
    return this.scrolling !== undefined
  }

  /** The first scroll of a run opens its step. */
  scrolled(): void {
    if (this.scrolling) return
    this.scrolling = this.push({ kind: 'scroll', x: 0, y: 0 })
  }

  resized(): void {
    if (this.resizing) return
    const l = this.last('viewport')
    this.resizing = l ?? this.push({ kind: 'viewport' })
  }

  /** The viewport once, read when first needed, and again only when a load finds it another size. */
  expectViewport(): void {
    this.viewportUnread = true
  }

  /** The runs of scrolling and resizing end here (the next step, or the steps read): their steps take the position and size of now. */
  private settle(): void {
    if (this.viewportUnread) {
      this.viewportUnread = false
      const seen = this.lastOf('viewport')
      const { innerWidth: width, innerHeight: height } = this.win
      // After the load's step (the last one: this runs before any other is added).
      if (seen?.width !== width || seen.height !== height) this.steps.push({ kind: 'viewport', width, height, at: this.steps[this.steps.length - 1]?.at ?? this.now() } as Kept)
    }
    const s = this.scrolling
    const r = this.resizing
    this.scrolling = this.resizing = undefined
    if (s) {
      s.x = Math.max(0, Math.round(this.win.scrollX))
      s.y = Math.max(0, Math.round(this.win.scrollY))
    }
    if (r) {
      r.width = this.win.innerWidth
      r.height = this.win.innerHeight
    }
  }

  /** Name and locate every step's element, and redact every step's address, not done yet (before the steps are read or saved). */
  private describe(): void {
    if (!this.undescribed) return
    this.undescribed = false
    for (const step of this.steps) {
      if (step.raw) {
        delete step.raw
        if (step.url !== undefined) step.url = this.redact(step.url)
      }
      const el = step.el
      if (!el) continue
      const words = step.words
      delete step.words
      delete step.el
      try {
        step.target = identify(el, words)
        locate(el, step.target)
      } catch {
        // a step without a selector
      }
    }
  }

  private prune(): void {
    const oldest = this.now() - WINDOW_MS
    let drop = 0
    while (drop < this.steps.length && this.steps[drop]!.at < oldest) drop++
    drop = Math.max(drop, this.steps.length - KEPT)
    if (drop > 0) this.steps.splice(0, drop)
  }

  /** The last step, when it is of `kind` (a scroll or resize continues it instead of adding one). */
  last(kind: Step['kind']): Kept | undefined {
    const l = this.steps[this.steps.length - 1]
    return l?.kind === kind ? l : undefined
  }

  /** The newest step of `kind`, wherever it is. */
  lastOf(kind: Step['kind']): Kept | undefined {
    for (let i = this.steps.length - 1; i >= 0; i--) if (this.steps[i]!.kind === kind) return this.steps[i]
    return undefined
  }

  // ---- typing: the final value of a field per focus

  /** Another keystroke in the field being typed in: the one thing to do is remember it changed. */
  typingIn(target: EventTarget | null): boolean {
    if (!this.typing || this.typing.el !== target) return false
    this.typing.dirty = true
    return true
  }

  input(el: TextField): void {
    if (this.typing?.el !== el) {
      // Another field typed in while the last one kept its focus (it left the page without a focusout): that one's step first.
      if (this.typing) this.flush()
      this.typing = { el, step: undefined, dirty: true }
      this.awaitBlur()
    } else this.typing.dirty = true
  }

  /** Write (or update) the typing step of the focused field. */
  flush(): void {
    const t = this.typing
    if (!t?.dirty) return
    t.dirty = false
    const value = this.masking || isSensitiveElement(t.el) ? undefined : t.el.value.slice(0, LIMITS.stepText)
    if (t.step && this.steps.includes(t.step)) {
      t.step.at = this.now()
      if (value === undefined) delete t.step.value
      else t.step.value = value
      return
    }
    t.step = this.act(value === undefined ? { kind: 'type', masked: true } : { kind: 'type', value }, t.el)
  }

  /** A focus left `target`: when it is the field typed in, its step is written and its typing ends; else its leaving is still to be heard. */
  blur(target: EventTarget | null): void {
    if (!this.typing) return
    if (this.typing.el !== target) return this.awaitBlur()
    this.flush()
    this.typing = undefined
  }

  // ---- the contract

  recent(): Step[] {
    this.flush()
    this.settle()
    this.prune()
    this.describe()
    const masking = this.masking
    const since = this.steps.filter((s) => s.at >= this.since)
    // After an annotation the steps start where the page was then: said as the page opened there.
    if (this.start && since[0]?.kind !== 'navigate') since.unshift({ kind: 'navigate', url: this.start, at: this.since })
    return since
      .slice(-KEPT)
      .map(({ at, ...s }) => {
        const out = { ...s, at: new Date(at).toISOString() } as Step
        if (s.target) out.target = { ...s.target }
        if (masking && s.kind === 'type' && out.value !== undefined) {
          delete out.value
          out.masked = true
        }
        return out
      })
  }

  mark(): void {
    this.flush()
    this.since = this.now() + 1
    this.start = this.redact(this.win.location.href)
    this.save()
  }

  pause(on: boolean): void {
    if (on) this.flush()
    this.paused = on
  }

  mask(on: boolean | undefined): void {
    this.maskSetting = on
    if (this.masking) for (const s of this.steps) if (s.kind === 'type' && s.value !== undefined) {
      delete s.value
      s.masked = true
    }
    this.save()
  }

  /** Kept for the next page of this tab (a full navigation or a reload). */
  save(): void {
    try {
      this.flush()
      this.settle()
      this.prune()
      this.describe()
      this.win.sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ steps: this.steps, since: this.since, start: this.start, ...(this.maskSetting === undefined ? {} : { mask: this.maskSetting }) }))
    } catch {
      // storage full or denied: the steps of this page only
    }
  }

  restore(): void {
    let saved: ReturnType<typeof fromStorage>
    try {
      saved = fromStorage(this.win.sessionStorage.getItem(STORAGE_KEY))
    } catch {
      saved = undefined
    }
    if (!saved) return
    this.steps = saved.steps
    this.since = saved.since
    if (saved.start !== undefined) this.start = saved.start
    this.maskSetting = saved.mask
    this.prune()
  }
}

type StepsWindow = Window & typeof globalThis & { [INSTALLED]?: unknown }

function compatible(value: unknown): value is StepsHandle {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Partial<StepsHandle>
  return v.version === STEPS_VERSION && typeof v.recent === 'function' && typeof v.mark === 'function' && typeof v.mask === 'function' && typeof v.pause === 'function'
}

/** The compatible recorder an early script installed on `page`, if any (nothing is installed here). */
export function installedSteps(page: Window): StepsHandle | undefined {
  const existing = (page as StepsWindow)[INSTALLED]
  return compatible(existing) ? existing : undefined
}

/** The recorder on `page`: the compatible one already installed, or a new one with its listeners. */
export function installSteps(page: Window): StepsHandle {
  const win = page as StepsWindow
  const existing = win[INSTALLED]
  if (compatible(existing)) return existing
  const doc = win.document
  // The focused field's leaving is heard once per field typed in (`once`), not on every focus change.
  let blurArmed = false
  const awaitBlur = (): void => {
    if (blurArmed) return
    blurArmed = true
    win.addEventListener('focusout', onFocusOut, LISTEN_ONCE)
  }
  const log = new StepLog(win, (raw) => redactUrl(raw).slice(0, LIMITS.url), Date.now, awaitBlur)
  win[INSTALLED] = log

  // Each listener is called by the browser itself (no wrapper in between): it leaves untrusted
  // events and the picker's events alone, and no throw of its bookkeeping reaches the page.
  // The document's own scrolls (heard on the document: an element's scroll events do not bubble to
  // it). The listener stays (adding and removing one per run of scrolling costs more than its calls):
  // while a scroll step is open a call returns at once.
  const onScroll = (e: Event): void => {
    if (log.scrollOpen || e.target !== doc || log.ignores(e)) return
    try {
      log.scrolled()
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  const onFocusOut = (e: FocusEvent): void => {
    blurArmed = false
    try {
      if (log.ignores(e)) awaitBlur()
      else log.blur(e.target)
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  doc.addEventListener('scroll', onScroll, { passive: true })

  log.restore()
  log.address('navigate', win.location.href)
  log.expectViewport()

  listen(win, 'change', (e) => {
    if (log.ignores(e)) return
    try {
      const el = pageElement(e)
      if (!el) return
      // A field's value committed (typed, pasted, filled in by the browser): its step written now.
      if (isTextField(el)) {
        log.input(el)
        return log.flush()
      }
      if (el instanceof HTMLSelectElement) {
        const masked = isSensitiveElement(el)
        const chosen = [...el.selectedOptions].map((o) => squash(o.label || o.text)).join(', ')
        log.act(masked ? { kind: 'select', masked: true } : { kind: 'select', value: chosen.slice(0, LIMITS.stepText) }, el)
      } else if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) {
        log.act({ kind: el.checked ? 'check' : 'uncheck' }, el)
      }
    } catch {
      // bookkeeping never disturbs the page
    }
  })
  // Enter in a field submits its form with a click on the form's button, made by the browser: that click is the Enter's, not a step.
  let entered: { form: HTMLFormElement | null; at: number } | undefined
  listen(win, 'click', (e) => {
    if (log.ignores(e)) return
    try {
      const hit = pageElement(e)
      if (!hit) return
      log.flush()
      const actionable = hit.closest(ACTIONABLE)
      const el = actionable ?? hit
      if (entered) {
        const implicit = e.detail === 0 && (el as HTMLButtonElement).form === entered.form && Date.now() - entered.at < 1000
        entered = undefined
        if (implicit) return
      }
      // Fields say what happened to them by their change: a click only focuses them (a label's click ticks its box).
      if (el instanceof HTMLInputElement && !CLICKED_INPUTS.test(el.type)) return
      if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || el instanceof HTMLOptionElement) return
      if (el instanceof HTMLLabelElement && el.control) return
      log.act({ kind: 'click' }, el, actionable !== null)
    } catch {
      // bookkeeping never disturbs the page
    }
  })
  listen(win, 'keydown', (e) => {
    if (log.ignores(e)) return
    try {
      const key = e.key
      if (!KEYS.has(key)) {
        // A key that edits a field: the field is typed in, its value read once when its step is written.
        if (edits(e) && !log.typingIn(e.target) && isTextField(e.target)) log.input(e.target)
        return
      }
      if (e.repeat || e.isComposing) return
      const el = pageElement(e)
      if (!el) return
      log.flush()
      if (key === 'Enter' && isTextField(el)) entered = { form: el.form, at: Date.now() }
      if (el === doc.body || el === doc.documentElement) log.push({ kind: 'key', key: key as 'Enter' })
      else log.act({ kind: 'key', key: key as 'Enter' }, el)
    } catch {
      // bookkeeping never disturbs the page
    }
  })
  listen(win, 'submit', (e) => {
    if (log.ignores(e)) return
    try {
      const form = pageElement(e)
      if (!form) return
      log.flush()
      log.act({ kind: 'submit' }, form)
    } catch {
      // bookkeeping never disturbs the page
    }
  })
  listen(win, 'resize', (e) => {
    if (log.ignores(e)) return
    try {
      log.resized()
    } catch {
      // bookkeeping never disturbs the page
    }
  })

  // Route changes within the page: the history calls the app makes, and the browser's back/forward and hash changes.
  let url = win.location.href
  const routed = (): void => {
    try {
      const now = win.location.href
      if (now === url) return
      url = now
      log.flush()
      log.address('route', now)
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  // Where the browser has the Navigation API, its event hears every one of them and the page's own
  // history calls stay the browser's; elsewhere pushState and replaceState are wrapped.
  const navigation = (win as { navigation?: EventTarget }).navigation
  if (navigation && typeof navigation.addEventListener === 'function') {
    navigation.addEventListener('currententrychange', routed)
  } else {
    const history = win.history
    for (const method of ['pushState', 'replaceState'] as const) {
      const original = history[method]
      history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
        const result = original.apply(this, args)
        routed()
        return result
      }
    }
    win.addEventListener('popstate', routed)
  }
  win.addEventListener('hashchange', routed)
  win.addEventListener('pagehide', () => log.save())
  win.document.addEventListener('visibilitychange', () => {
    if (win.document.visibilityState === 'hidden') log.save()
  })
  return log
}
