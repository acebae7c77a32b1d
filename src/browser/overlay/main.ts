/**
 * The Marginalia overlay: one script tag in any page —
 *
 *   <script src="http://127.0.0.1:4848/overlay.js" defer></script>
 *
 * — and the person can point at an element (or select text), write what is wrong, and watch the
 * agent answer. It talks to the server the script came from (REST + Server-Sent Events), lives
 * in a shadow root (the page's CSS and ours never meet), and adds one global, `window.Marginalia`.
 */
import { Overlay } from './overlay.js'

declare const __MARGINALIA_VERSION__: string
const VERSION = typeof __MARGINALIA_VERSION__ === 'string' ? __MARGINALIA_VERSION__ : 'dev'

/** What `window.Marginalia` offers (for people and for scripts); the README's "The overlay" section documents it. */
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

/** The server's base URL: `data-server` on the script tag, else the directory the script was loaded from. */
function serverFromScript(script: HTMLScriptElement | null): string | undefined {
  if (!script) return undefined
  const given = script.dataset.server
  if (given) return given.replace(/\/+$/, '')
  if (!script.src) return undefined
  return new URL('.', script.src).href.replace(/\/+$/, '')
}

/** Exactly the documented API, and nothing of the overlay's insides. */
function publicApi(overlay: Overlay): MarginaliaApi {
  const api: MarginaliaApi = {
    version: VERSION,
    server: overlay.server,
    get sessionId() {
      return overlay.sessionId
    },
    annotate: (on) => overlay.annotate(on),
    comment: (element) => overlay.comment(element),
    open: (id) => overlay.open(id),
    flush: () => overlay.flush(),
    destroy: () => {
      overlay.destroy()
      if (window.Marginalia === api) delete window.Marginalia
    },
  }
  return api
}

/** Start once per page, from the script tag that loaded us. */
/** `data-screenshot-budget` in ms (200 to 60 000), or undefined for the default; a wrong value is said on the console. */
function screenshotBudget(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const ms = Number(raw)
  if (Number.isInteger(ms) && ms >= 200 && ms <= 60_000) return ms
  console.warn(`Marginalia: data-screenshot-budget="${raw}" is not a number of milliseconds from 200 to 60000; using 1000.`)
  return undefined
}

function boot(): void {
  if (window.Marginalia) return
  const script = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[src*="overlay.js"]')
  const server = serverFromScript(script)
  if (!server) {
    console.warn('Marginalia: could not tell which server this overlay came from; add data-server="http://127.0.0.1:4848" to its script tag.')
    return
  }
  // data-shortcut="Ctrl+Alt+M": the annotate shortcut (the Vite plugin's `shortcut` option sets it).
  // data-screenshot-budget="3000": how long a screenshot may take, in ms (a slow machine or a huge page).
  const overlay = new Overlay(server, { shortcut: script?.dataset.shortcut, screenshotBudgetMs: screenshotBudget(script?.dataset.screenshotBudget) })
  window.Marginalia = publicApi(overlay)
  const start = () => overlay.mount()
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true })
  else start()
}

if (typeof window !== 'undefined' && typeof document !== 'undefined') boot()
