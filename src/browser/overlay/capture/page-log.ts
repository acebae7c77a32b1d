/**
 * What the page logged since load, kept small: console.error/warn calls, uncaught errors,
 * unhandled rejections and failed fetch/XHR requests. The wrappers call the page's originals
 * with the same arguments and hand back their very return values (the same promise object for
 * fetch); a throw in the bookkeeping is swallowed. Installed once per window.
 */
import { LIMITS } from '../../../store/vocabulary.js'
import { clip } from '../../shared/format.js'
import type { PageEntry } from '../../shared/types.js'

const KEPT = 50
const WINDOW_MS = 60_000
const STACK_LINES = 5
const SECRET = /token|key|secret|passw|auth|session|sig|credential|code/i
/** A symbol, not a name: the overlay adds no global but `window.Marginalia`. */
const INSTALLED = Symbol.for('marginalia.pageLog')

/** A URL without the values of parameters named like secrets (token, key, secret, password, auth, session …). */
function redactUrl(raw: string, base = location.href): string {
  try {
    const url = new URL(raw, base)
    for (const name of [...new Set(url.searchParams.keys())]) if (SECRET.test(name)) url.searchParams.set(name, 'REDACTED')
    url.username = ''
    url.password = ''
    return clip(url.href, LIMITS.url)
  } catch {
    return clip(raw.split('?')[0] ?? '', LIMITS.url)
  }
}

function text(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  if (typeof value === 'string') return value
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

export class PageLog {
  private readonly entries: PageEntry[] = []

  constructor(private readonly now: () => number = Date.now) {}

  add(entry: Omit<PageEntry, 'at' | 'message'> & { message: string }): void {
    const e: PageEntry = { ...entry, message: clip(entry.message, LIMITS.pageEntryMessage), at: new Date(this.now()).toISOString() }
    this.entries.push(e)
    if (this.entries.length > KEPT) this.entries.splice(0, this.entries.length - KEPT)
  }

  /** The entries of the last 60 s, at most 20 (the newest). */
  recent(): PageEntry[] {
    const since = this.now() - WINDOW_MS
    return this.entries.filter((e) => Date.parse(e.at) >= since).slice(-LIMITS.pageEntries)
  }
}

type LoggedWindow = Window & typeof globalThis & { [INSTALLED]?: PageLog }

/**
 * Install the wrappers on `win` (once; later calls return the same log). `ignore(url)`: requests
 * of the overlay itself, never logged.
 */
export function installPageLog(page: Window, ignore: (url: string) => boolean): PageLog {
  const w = page as LoggedWindow
  const win = w
  if (w[INSTALLED]) return w[INSTALLED]
  const log = new PageLog()
  w[INSTALLED] = log
  const safe = (fn: () => void): void => {
    try {
      fn()
    } catch {
      // bookkeeping never disturbs the page
    }
  }

  for (const level of ['error', 'warn'] as const) {
    const original = win.console[level]
    win.console[level] = function (this: unknown, ...args: unknown[]) {
      safe(() => log.add({ kind: `console.${level}`, message: args.map(text).join(' '), ...optional('stack', stackOf(args.find((a) => a instanceof Error))) }))
      return original.apply(this, args) as unknown
    } as Console['error']
  }
  win.addEventListener('error', (e: ErrorEvent) => safe(() => log.add({ kind: 'error', message: e.message || text(e.error), ...optional('stack', stackOf(e.error)) })))
  win.addEventListener('unhandledrejection', (e: PromiseRejectionEvent) => safe(() => log.add({ kind: 'unhandledrejection', message: text(e.reason), ...optional('stack', stackOf(e.reason)) })))

  const originalFetch = win.fetch
  if (typeof originalFetch === 'function') {
    win.fetch = function (this: unknown, ...args: Parameters<typeof fetch>) {
      const started = Date.now()
      const result = originalFetch.apply(this, args)
      safe(() => {
        const [input, init] = args
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
        if (ignore(url)) return
        const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
        const entry = { kind: 'network' as const, method: clip(method, 16), url: redactUrl(url) }
        // A branch of its own: the page's promise is returned untouched, and this branch never rejects.
        result.then(
          (r) => {
            if (!r.ok) safe(() => log.add({ ...entry, status: r.status, durationMs: Date.now() - started, message: `${method} ${entry.url} → ${r.status}` }))
          },
          (err: unknown) => safe(() => log.add({ ...entry, status: 0, durationMs: Date.now() - started, message: `${method} ${entry.url} failed: ${text(err)}` })),
        )
      })
      return result
    } as typeof fetch
  }

  const xhr = win.XMLHttpRequest?.prototype
  if (xhr) {
    const open = xhr.open
    const send = xhr.send
    const meta = new WeakMap<XMLHttpRequest, { method: string; url: string }>()
    xhr.open = function (this: XMLHttpRequest, ...args: unknown[]) {
      safe(() => meta.set(this, { method: String(args[0]).toUpperCase(), url: String(args[1]) }))
      return (open as (...a: unknown[]) => void).apply(this, args)
    } as typeof xhr.open
    xhr.send = function (this: XMLHttpRequest, ...args: unknown[]) {
      safe(() => {
        const m = meta.get(this)
        if (!m || ignore(new URL(m.url, location.href).href)) return
        const started = Date.now()
        this.addEventListener('loadend', () =>
          safe(() => {
            if (this.status !== 0 && this.status < 400) return
            const url = redactUrl(m.url)
            log.add({ kind: 'network', method: clip(m.method, 16), url, status: this.status, durationMs: Date.now() - started, message: `${m.method} ${url} ${this.status === 0 ? 'failed' : `→ ${this.status}`}` })
          }),
        )
      })
      return (send as (...a: unknown[]) => void).apply(this, args)
    } as typeof xhr.send
  }
  return log
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>)
}

/** Off for this origin with `localStorage['marginalia:page-log'] = 'off'` (on by default). */
export function pageLogEnabled(): boolean {
  try {
    return localStorage.getItem('marginalia:page-log') !== 'off'
  } catch {
    return true
  }
}
