/**
 * `window.Marginalia`: what the overlay offers people and scripts, the same whether a script tag
 * or the browser extension put it in the page.
 */
import type { Overlay } from './overlay.js'

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

/** Exactly the documented API, and nothing of the overlay's insides. */
export function publicApi(overlay: Overlay): MarginaliaApi {
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

