/**
 * The steps' log (./steps.ts listens and installs it): what is kept, for how long (the last 5
 * minutes, at most 100 steps), the runs of scrolling, resizing and typing it closes when the next
 * step comes, the description and redaction done when the steps are read or saved, and the copy
 * kept in sessionStorage for the tab's next page.
 */
import { LIMITS, STEP_KINDS } from '../../store/vocabulary.js'
import type { Step } from '../shared/types.js'
import { identify, locate, squash } from './describe.js'
import { isSensitiveElement } from './redact.js'
import type { TextField } from './steps-events.js'
import { isLocalDevOrigin } from './steps-settings.js'

const KEPT = LIMITS.steps
const WINDOW_MS = 5 * 60_000
const STORAGE_KEY = 'marginalia:steps'
export const STEPS_VERSION = 1

export interface StepsHandle {
  readonly version: typeof STEPS_VERSION
  recent(): Step[]
  mark(): void
  mask(on: boolean | undefined): void
  pause(on: boolean): void
  /**
   * The overlay's own keydown listener, called after the recorder's in the recorder's window
   * listener (one listener on every key press, not two); undefined takes it off. Optional: a
   * recorder without it leaves the overlay to listen itself.
   */
  keys?(listener: ((e: KeyboardEvent) => void) | undefined): void
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

export class StepLog implements StepsHandle {
  readonly version = STEPS_VERSION
  private steps: Kept[] = []
  private since = 0
  /** Where the page was when `mark()` was called: where the next steps start. */
  private start: string | undefined
  private maskSetting: boolean | undefined
  /**
   * The steps this tab kept from its last page are read from `sessionStorage` when first needed
   * (the page's first step after its load, the steps read or saved, a mark or a mask), never as
   * the page loads: a page's first use of `sessionStorage` is a blocking call to the browser.
   */
  private restored = false
  /** The overlay's picker is on: nothing the person does is a step of the page. */
  paused = false
  /** The overlay's keydown listener (see `keys`). */
  keyListener: ((e: KeyboardEvent) => void) | undefined

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
  /**
   * The field typed in during its current focus, and the step that says so once written; `dirty`:
   * typed in since its value was last read (the recorder's key listener sets it itself).
   */
  typing: { readonly el: TextField; step: Kept | undefined; dirty: boolean } | undefined

  constructor(
    private readonly win: Window,
    /** The page's address as a step may keep it (redacted and clipped). */
    private readonly redact: (url: string) => string,
    private readonly now: () => number = Date.now,
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

  /**
   * The first scroll of a run opens its step; later ones return at once. The run ends at the next
   * step (or when the steps are read): its step takes the position of then.
   */
  scrolled(): void {
    if (this.scrolling) return
    this.scrolling = this.push({ kind: 'scroll', x: 0, y: 0 })
  }

  /**
   * The document's scroll offset as a pointer event saw it (its pageX − clientX, pageY − clientY,
   * set when the browser made the event): an open run of scrolling ends there, without the layout
   * that reading `scrollX` forces on a page changed since its last frame.
   */
  scrolledTo(x: number, y: number): void {
    const s = this.scrolling
    if (!s) return
    this.scrolling = undefined
    s.x = Math.max(0, Math.round(x))
    s.y = Math.max(0, Math.round(y))
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
      // The last page's viewport step, if any, is among the steps it kept.
      this.restore()
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

  /**
   * The field typed in was taken out of the page with the focus in it, where the browser fires no
   * focusout then (Firefox): its step is written and its typing ends. Asked on a click or an acting
   * key, whose next keystrokes may be another field's.
   */
  focusLost(): void {
    if (this.typing && !this.typing.el.isConnected) {
      this.flush()
      this.typing = undefined
    }
  }

  input(el: TextField): void {
    if (this.typing?.el !== el) {
      // Another field typed in while the last one kept its focus (it left the page without a focusout): that one's step first.
      if (this.typing) this.flush()
      this.typing = { el, step: undefined, dirty: true }
    } else this.typing.dirty = true
  }

  /** Write (or update) the typing step of the focused field. */
  flush(): void {
    const t = this.typing
    if (!t?.dirty) return
    t.dirty = false
    // The tab's mask setting may be among the kept steps: known before a value is kept.
    this.restore()
    const value = this.masking || isSensitiveElement(t.el) ? undefined : t.el.value.slice(0, LIMITS.stepText)
    if (t.step && this.steps.includes(t.step)) {
      t.step.at = this.now()
      if (value === undefined) delete t.step.value
      else t.step.value = value
      return
    }
    t.step = this.act(value === undefined ? { kind: 'type', masked: true } : { kind: 'type', value }, t.el)
  }

  /** A focus left `target`: when it is the field typed in, its step is written and its typing ends. */
  blur(target: EventTarget | null): void {
    if (!this.typing || this.typing.el !== target) return
    this.flush()
    this.typing = undefined
  }

  // ---- the contract

  recent(): Step[] {
    this.restore()
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
    this.restore()
    this.flush()
    this.since = this.now() + 1
    this.start = this.redact(this.win.location.href)
    this.save()
  }

  pause(on: boolean): void {
    if (on) this.flush()
    this.paused = on
  }

  keys(listener: ((e: KeyboardEvent) => void) | undefined): void {
    this.keyListener = listener
  }

  mask(on: boolean | undefined): void {
    this.restore()
    this.maskSetting = on
    this.dropTypedValues()
    this.save()
  }

  /** Kept for the next page of this tab (a full navigation or a reload). */
  save(): void {
    try {
      this.restore()
      this.flush()
      this.settle()
      this.prune()
      this.describe()
      this.win.sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ steps: this.steps, since: this.since, start: this.start, ...(this.maskSetting === undefined ? {} : { mask: this.maskSetting }) }))
    } catch {
      // storage full or denied: the steps of this page only
    }
  }

  /**
   * The steps the last page of this tab kept, once: before this page's own (all newer), with its
   * mark and its mask setting, which this page has not changed yet (a change restores first).
   * A value typed here before then, kept while the tab's setting was not yet known, is dropped
   * when that setting masks.
   */
  private restore(): void {
    if (this.restored) return
    this.restored = true
    let saved: ReturnType<typeof fromStorage>
    try {
      saved = fromStorage(this.win.sessionStorage.getItem(STORAGE_KEY))
    } catch {
      saved = undefined
    }
    if (!saved) return
    this.steps = [...saved.steps, ...this.steps]
    this.since = saved.since
    if (saved.start !== undefined) this.start = saved.start
    this.maskSetting = saved.mask
    this.dropTypedValues()
    this.prune()
  }

  /** When typed values are masked: none is kept, those kept so far included. */
  private dropTypedValues(): void {
    if (this.masking) for (const s of this.steps) if (s.kind === 'type' && s.value !== undefined) {
      delete s.value
      s.masked = true
    }
  }
}
