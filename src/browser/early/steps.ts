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
 * Cheap: listeners called by the browser directly (passive but keydown's, which the overlay's key
 * listener shares), each a few property reads and no
 * layout read; an event that makes a step (a click, a change, a submit) keeps only the element (and
 * a button's or link's words, unsquashed), which ./describe.ts names and locates when the steps are
 * read or saved, as a route's address is redacted then. Typing is heard by the keys that edit a
 * field (no `input` listener: a keystroke costs one `keydown` call, which reads only the key while
 * a field is typed in) and by the field's `change`
 * (paste, autofill), its value read when its step is written (the next step, leaving the field —
 * `focusout`, which reads one property on any other focus change —, its change). A scroll of the document is heard
 * once per gesture, when it comes to rest (`scrollend`; per scroll event where the browser lacks
 * it): the first opens a scroll step and later calls return at once until the next step closes it,
 * the position read then, once (from the click's own coordinates when that step is a pointer's
 * click, which reads no layout); a run of resizes is one step, its size read when
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
 * — while the person picks what to annotate, their clicks and keys are the overlay's, not steps;
 * and, optional (recorders before it lack it), `keys(listener | undefined): void` — the overlay's
 * own keydown listener, called after the recorder's in the recorder's window listener (not passive).
 */
import { LIMITS } from '../../store/vocabulary.js'
import { squash } from './describe.js'
import { isSensitiveElement, redactUrl } from './redact.js'
import { ACTIONABLE, edits, isTextField, pageElement } from './steps-events.js'
import { STEPS_VERSION, StepLog, type StepsHandle } from './steps-log.js'

export type { StepsHandle } from './steps-log.js'

const INSTALLED = Symbol.for('marginalia.steps')
const KEYS = new Set(['Enter', 'Escape', 'Tab'])
/** Input types a click acts with (any other input says what happened to it by its change). */
const CLICKED_INPUTS = /^(submit|button|reset|image)$/
/** Passive: the recorder never cancels what the person does, so the browser need not wait on it. */
const LISTEN: AddEventListenerOptions = { capture: true, passive: true }

/** One capture listener on the window per event type (capture: it hears what the page stops). */
function listen<K extends keyof WindowEventMap>(win: Window, type: K, fn: (e: WindowEventMap[K]) => void): void {
  win.addEventListener(type, fn, LISTEN)
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
  const log = new StepLog(win, (raw) => redactUrl(raw).slice(0, LIMITS.url), Date.now)
  win[INSTALLED] = log

  // Each listener is called by the browser itself (no wrapper in between): it leaves untrusted
  // events and the picker's events alone, and no throw of its bookkeeping reaches the page.
  // The document's own scrolls (heard on the document: an element's scrolls do not bubble to it):
  // where the browser has `scrollend`, one call per gesture when it comes to rest, else one per
  // scroll event (the listener stays: adding and removing one per run of scrolling costs more than
  // its calls). The first call of a run opens its step and later ones return at once; the
  // position is read once, when the next step closes the run.
  const onScroll = (e: Event): void => {
    if (log.scrollOpen || e.target !== doc || log.ignores(e)) return
    try {
      log.scrolled()
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  // A focus leaving the field typed in writes its step: one property read on any other focus change.
  const onFocusOut = (e: FocusEvent): void => {
    const typing = log.typing
    if (typing === undefined || e.target !== typing.el || log.ignores(e)) return
    try {
      log.blur(typing.el)
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  doc.addEventListener('onscrollend' in win ? 'scrollend' : 'scroll', onScroll, { passive: true })

  // The last page's steps are read back when first needed (StepLog.restore), not here.
  log.address('navigate', win.location.href)
  log.expectViewport()

  listen(win, 'focusout', onFocusOut)
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
      // A pointer's click (not a key's: it has no position) says where the document is scrolled.
      if (log.scrollOpen && e.detail > 0) log.scrolledTo(e.pageX - e.clientX, e.pageY - e.clientY)
      log.focusLost()
      log.flush()
      const actionable = hit.closest(ACTIONABLE)
      const el = actionable ?? hit
      if (entered) {
        const implicit = e.detail === 0 && (el as HTMLButtonElement).form === entered.form && Date.now() - entered.at < 1000
        entered = undefined
        if (implicit) return
      }
      // Fields say what happened to them by their change: a click only focuses them (a label's click ticks its box).
      // Told by the element's name: one read, where each interface check walks a prototype chain.
      switch (el.localName) {
        case 'input':
          if (!CLICKED_INPUTS.test((el as HTMLInputElement).type)) return
          break
        case 'textarea':
        case 'select':
        case 'option':
          return
        case 'label':
          if ((el as HTMLLabelElement).control) return
      }
      log.act({ kind: 'click' }, el, actionable !== null)
    } catch {
      // bookkeeping never disturbs the page
    }
  })
  const onKey = (e: KeyboardEvent, key: string): void => {
    try {
      if (!KEYS.has(key)) {
        // A key that edits a field: the field is typed in, its value read once when its step is written.
        if (edits(e)) {
          const target = e.target
          if (isTextField(target)) log.input(target)
        }
        return
      }
      if (e.repeat || e.isComposing) return
      const el = pageElement(e)
      if (!el) return
      log.focusLost()
      log.flush()
      if (key === 'Enter' && isTextField(el)) entered = { form: el.form, at: Date.now() }
      if (el === doc.body || el === doc.documentElement) log.push({ kind: 'key', key: key as 'Enter' })
      else log.act({ kind: 'key', key: key as 'Enter' }, el)
    } catch {
      // bookkeeping never disturbs the page
    }
  }
  // Not passive: the overlay's own listener, called from here (`keys`), may take a key it handles from the page.
  // The common key press, a character in the field being typed in, reads its key and nothing else
  // and marks the field changed: the field is the one the focus is in until its focusout is heard,
  // and a key that changed nothing only has its value read once more when its step is written.
  win.addEventListener(
    'keydown',
    (e) => {
      const key = e.key
      const typing = log.typing
      if (typing !== undefined && !KEYS.has(key)) typing.dirty = true
      else if (!log.ignores(e)) onKey(e, key)
      log.keyListener?.(e)
    },
    { capture: true },
  )
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
