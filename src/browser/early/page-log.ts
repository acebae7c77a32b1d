/**
 * The page log: what the page logged since it loaded, kept small — console.error/warn calls,
 * uncaught errors, unhandled rejections and failed requests (fetch and XHR by their wrappers; any
 * other request, and every request made before the log was installed, from the Performance API's
 * `responseStatus`). The wrappers call the page's originals with the same arguments and hand back
 * their very return values (the same promise object for fetch); a throw in the bookkeeping is
 * swallowed, and nothing here ever writes to the page's console.
 *
 * Who installs it, first one wins:
 *   - the early recorder (`early.js`, built from ./main.ts): the Vite plugin's loader inlines it,
 *     first in <head>; `loader.js` (the head snippet of every other set-up) starts with it; the
 *     browser extension runs the same code in the page's main world at document_start;
 *   - otherwise the overlay, when it mounts (requests that failed before come from the
 *     Performance API, console calls made before are lost).
 *
 * THE CONTRACT between them (stable: the early script and the overlay may come from different
 * releases — the extension's copy is bundled with the extension). The log lives at
 * `window[Symbol.for('marginalia.pageLog')]` — a registered symbol, so no page global — and is an
 * object with:
 *   - `version: 1` — the contract's version. A change a reader of version 1 could not use bumps
 *     it; a reader that finds a version it does not know installs its own log in its place;
 *   - `recent(): PageEntry[]` — the entries of the last 60 s, at most 20, oldest first, in the
 *     store's `PageEntry` shape (src/store/model.ts: kind, at, message, stack?, method?, url?,
 *     status?, durationMs?);
 *   - `ignore(test: (url: string) => boolean): void` — requests whose absolute URL passes `test`
 *     are never logged, and network entries kept so far that pass it are dropped (the overlay
 *     registers its own server this way).
 * Installing is idempotent: `installPageLog` returns the compatible log already there (adding
 * its `ignore`) and wraps nothing twice. `localStorage['marginalia:page-log'] = 'off'` turns the
 * log off for the origin: the early recorder then installs nothing.
 */
import { LIMITS } from '../../store/vocabulary.js'
import { clip } from '../shared/format.js'
import type { PageEntry } from '../shared/types.js'
import { describeLogged, redactUrl as redactedUrl } from './redact.js'

const KEPT = 50
const WINDOW_MS = 60_000
const STACK_LINES = 5
/** A registered symbol, not a name: the overlay adds no global but `window.Marginalia`. */
const INSTALLED = Symbol.for('marginalia.pageLog')
/** The contract's version (see above). */
const PAGE_LOG_VERSION = 1

/** The log as the overlay and any other reader see it: the contract above. */
export interface PageLogHandle {
  readonly version: typeof PAGE_LOG_VERSION
  recent(): PageEntry[]
  ignore(test: (url: string) => boolean): void
}

/** A URL as the log keeps it: redacted (redact.ts) and within the store's limit. */
function redactUrl(raw: string): string {
  return clip(redactedUrl(raw), LIMITS.url)
}

function absolute(raw: string): string {
  try {
    return new URL(raw, location.href).href
  } catch {
    return raw
  }
}

function text(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  if (typeof value === 'string') return value
  // An element logged by the page: its redacted opening tag, never its values or contents.
  const element = describeLogged(value)
  if (element !== undefined) return element
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

function stackOf(value: unknown): string | undefined {
  const stack = value instanceof Error ? value.stack : undefined
  return stack ? clip(stack.split('\n').slice(0, STACK_LINES).join('\n'), LIMITS.pageEntryStack) : undefined
}

type NewEntry = Omit<PageEntry, 'at' | 'message'> & { message: string }
/**
 * An entry as kept: `at` in ms since the epoch (the ISO string is made only when the log is read).
 * `args`: what the page handed a console call or an error event, not worded yet — `message` (when
 * empty) and `stack` are made from them when the log is read or the page is idle, whichever comes
 * first, so the page's call pays for no formatting, serialising or stack reading.
 */
type Kept = NewEntry & { at: number; args?: readonly unknown[] }

/** Once the page is idle (or soon, where the browser cannot say): off the page's own calls. */
function whenIdle(fn: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(fn, { timeout: 2_000 })
  else setTimeout(fn, 50)
}

/** Give an entry kept with its `args` its words: the message (unless it has one) and the stack of the first Error among them. */
function word(e: Kept): void {
  const args = e.args
  if (args === undefined) return
  delete e.args
  let error: unknown
  for (let i = 0; i < args.length && error === undefined; i++) if (args[i] instanceof Error) error = args[i]
  if (e.message === '') {
    let message = ''
    // Words past the limit would be clipped: the rest of the arguments are not formatted at all.
    for (let i = 0; i < args.length && message.length <= LIMITS.pageEntryMessage; i++) message += i === 0 ? text(args[i]) : ` ${text(args[i])}`
    e.message = clip(message, LIMITS.pageEntryMessage)
  }
  const stack = error === undefined ? undefined : stackOf(error)
  if (stack !== undefined) e.stack = stack
}

class PageLog implements PageLogHandle {
  readonly version = PAGE_LOG_VERSION
  /** Oldest first; trimmed to the newest KEPT once it holds twice as many (amortised O(1) per entry). */
  private readonly entries: Kept[] = []
  private readonly ignored: ((url: string) => boolean)[] = []
  /** Entries kept with their `args` wait for an idle moment: one wait at a time. */
  private wording = false

  constructor(private readonly now: () => number = Date.now) {}

  /** Keep `entry`, stamped `at` (ms since the epoch; default now), in time order. */
  add(entry: NewEntry, at = this.now()): void {
    const e = entry as Kept
    e.message = clip(entry.message, LIMITS.pageEntryMessage)
    e.at = at
    this.place(e)
  }

  /**
   * Keep what the page handed a console call or an error event as it is (O(1): no formatting, no
   * stack read); `message` when the event has its own, else it is made from `args`.
   */
  keep(kind: Kept['kind'], args: readonly unknown[], message = ''): void {
    this.place({ kind, message, at: this.now(), args })
    if (this.wording) return
    this.wording = true
    whenIdle(() => {
      this.wording = false
      this.wordAll()
    })
  }

  private place(e: Kept): void {
    const list = this.entries
    const at = e.at
    let i = list.length
    // Entries come in time order but for the Performance API's, which may be older: placed by time.
    while (i > 0 && list[i - 1]!.at > at) i--
    if (i === list.length) list.push(e)
    else list.splice(i, 0, e)
    if (list.length >= KEPT * 2) list.splice(0, list.length - KEPT)
  }

  private wordAll(): void {
    for (const e of this.entries) {
      try {
        word(e)
      } catch {
        // a value that cannot be worded keeps the words it has
        delete e.args
      }
    }
  }

  /** True when a request to `url` (absolute) is not to be logged. */
  skips(url: string): boolean {
    return this.ignored.some((test) => {
      try {
        return test(url)
      } catch {
        return false
      }
    })
  }

  ignore(test: (url: string) => boolean): void {
    this.ignored.push(test)
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const url = this.entries[i]!.url
      if (url !== undefined && this.skips(url)) this.entries.splice(i, 1)
    }
  }

  /** The entries of the last 60 s, at most 20 (the newest), oldest first. */
  recent(): PageEntry[] {
    const since = this.now() - WINDOW_MS
    this.wordAll()
    return this.entries
      .slice(-KEPT)
      .filter((e) => e.at >= since)
      .slice(-LIMITS.pageEntries)
      .map((e) => ({ ...e, at: new Date(e.at).toISOString() }))
  }
}

type LoggedWindow = Window & typeof globalThis & { [INSTALLED]?: unknown }

function compatible(value: unknown): value is PageLogHandle {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Partial<PageLogHandle>
  return v.version === PAGE_LOG_VERSION && typeof v.recent === 'function' && typeof v.ignore === 'function'
}

/** A resource timing entry with the status of its response (Chromium 109+, Firefox 113+); older browsers leave it out. */
type TimedRequest = PerformanceResourceTiming & { responseStatus?: number }

/** The compatible log an early recorder installed on `page`, if any (nothing is installed here). */
export function installedPageLog(page: Window): PageLogHandle | undefined {
  const existing = (page as LoggedWindow)[INSTALLED]
  return compatible(existing) ? existing : undefined
}

/**
 * The log on `win`: the compatible one already installed (by the early recorder), or a new one
 * with its wrappers. `ignore(url)`: requests never logged (the overlay's own).
 */
export function installPageLog(page: Window, ignore?: (url: string) => boolean): PageLogHandle {
  const win = page as LoggedWindow
  const existing = win[INSTALLED]
  if (compatible(existing)) {
    if (ignore) existing.ignore(ignore)
    return existing
  }
  const log = new PageLog()
  if (ignore) log.ignore(ignore)
  win[INSTALLED] = log
  const safe = (fn: () => void): void => {
    try {
      fn()
    } catch {
      // bookkeeping never disturbs the page
    }
  }

  // console.error and console.warn: their arguments kept as they are, worded when the log is read
  // or the page is idle; console.log, info and debug are not wrapped at all.
  for (const level of ['error', 'warn'] as const) {
    const original = win.console[level]
    const kind = `console.${level}` as const
    win.console[level] = function (this: unknown, ...args: unknown[]) {
      try {
        log.keep(kind, args)
      } catch {
        // bookkeeping never disturbs the page
      }
      return original.apply(this, args) as unknown
    } as Console['error']
  }
  // Uncaught errors and rejections: the error or reason kept, its words and stack made later.
  win.addEventListener('error', (e: ErrorEvent) => safe(() => log.keep('error', [e.error], e.message)))
  win.addEventListener('unhandledrejection', (e: PromiseRejectionEvent) => safe(() => log.keep('unhandledrejection', [e.reason])))

  // fetch: a call costs a clock read and one branch on its promise; the URL is resolved, checked
  // against the ignored ones and redacted only for a response to log (a failure).
  const originalFetch = win.fetch
  if (typeof originalFetch === 'function') {
    const failed = (input: Parameters<typeof fetch>[0], init: RequestInit | undefined, started: number, status: number, err: unknown): void =>
      safe(() => {
        const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
        if (log.skips(absolute(raw))) return
        const method = String(init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
        const url = redactUrl(raw)
        const message = status === 0 ? `${method} ${url} failed: ${text(err)}` : `${method} ${url} → ${status}`
        log.add({ kind: 'network', method: clip(method, 16), url, status, durationMs: Date.now() - started, message })
      })
    win.fetch = function (this: unknown, input: Parameters<typeof fetch>[0], init?: RequestInit) {
      const started = Date.now()
      const result = originalFetch.call(this, input, init)
      try {
        // A branch of its own: the page's promise is returned untouched, and this branch never rejects.
        result.then(
          (r) => {
            if (!r.ok) failed(input, init, started, r.status, undefined)
          },
          (err: unknown) => failed(input, init, started, 0, err),
        )
      } catch {
        // bookkeeping never disturbs the page
      }
      return result
    } as typeof fetch
  }

  // XHR: open notes the method and URL; send adds one shared listener. Only a failed request is
  // resolved, checked against the ignored ones and redacted.
  const xhr = win.XMLHttpRequest?.prototype
  if (xhr) {
    const open = xhr.open
    const send = xhr.send
    const meta = new WeakMap<XMLHttpRequest, { method: unknown; url: unknown; started: number }>()
    const loadend = function (this: XMLHttpRequest): void {
      safe(() => {
        const m = meta.get(this)
        if (!m || (this.status !== 0 && this.status < 400)) return
        const raw = String(m.url)
        if (log.skips(absolute(raw))) return
        const method = String(m.method).toUpperCase()
        const url = redactUrl(raw)
        log.add({ kind: 'network', method: clip(method, 16), url, status: this.status, durationMs: Date.now() - m.started, message: `${method} ${url} ${this.status === 0 ? 'failed' : `→ ${this.status}`}` })
      })
    }
    // open and send allocate nothing per call but the request's first note (no closure).
    xhr.open = function (this: XMLHttpRequest, ...args: unknown[]) {
      try {
        const m = meta.get(this)
        if (m) {
          m.method = args[0]
          m.url = args[1]
        } else meta.set(this, { method: args[0], url: args[1], started: 0 })
      } catch {
        // bookkeeping never disturbs the page
      }
      return (open as (...a: unknown[]) => void).apply(this, args)
    } as typeof xhr.open
    xhr.send = function (this: XMLHttpRequest, ...args: unknown[]) {
      try {
        const m = meta.get(this)
        if (m) {
          m.started = Date.now()
          // The same function each time: added once per request object, however often it is sent.
          this.addEventListener('loadend', loadend)
        }
      } catch {
        // bookkeeping never disturbs the page
      }
      return (send as (...a: unknown[]) => void).apply(this, args)
    } as typeof xhr.send
  }

  safe(() => observeRequests(win, log))
  return log
}

/**
 * Failed requests the wrappers cannot see, from the Performance API: the document itself and
 * every request made before the log was installed (buffered entries, those still in flight
 * included), and afterwards any request that is not a fetch or an XHR (scripts, styles, images).
 * Only responses with a status of 400 or more: the API gives no status for a network error, nor
 * for a cross-origin response the page may not read; nor what the browser fetches by itself
 * (the favicon).
 */
function observeRequests(win: LoggedWindow, log: PageLog): void {
  const perf = win.performance
  const Observer = win.PerformanceObserver as typeof PerformanceObserver | undefined
  if (!perf || typeof Observer !== 'function') return
  const installedAt = perf.now()
  const origin = perf.timeOrigin
  const record = (entry: TimedRequest): void => {
    const status = entry.responseStatus
    if (typeof status !== 'number' || status < 400) return
    // 'other': what the browser asks for by itself (the favicon), not the page.
    if (entry.initiatorType === 'other') return
    const wrapped = entry.initiatorType === 'fetch' || entry.initiatorType === 'xmlhttprequest'
    if (wrapped && entry.startTime >= installedAt) return
    if (log.skips(entry.name)) return
    const url = redactUrl(entry.name)
    const what = entry.entryType === 'navigation' ? 'the page' : entry.initiatorType
    log.add({ kind: 'network', url, status, durationMs: Math.max(0, Math.round(entry.duration)), message: `${url} → ${status} (${what})` }, origin + entry.startTime)
  }
  const observer = new Observer((list) => {
    for (const entry of list.getEntries()) {
      try {
        record(entry as TimedRequest)
      } catch {
        // bookkeeping never disturbs the page
      }
    }
  })
  for (const type of ['navigation', 'resource']) {
    try {
      observer.observe({ type, buffered: true })
    } catch {
      // a browser without this entry type
    }
  }
}

/** Off for this origin with `localStorage['marginalia:page-log'] = 'off'` (on by default). */
export function pageLogEnabled(): boolean {
  try {
    return localStorage.getItem('marginalia:page-log') !== 'off'
  } catch {
    return true
  }
}
