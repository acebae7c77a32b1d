/**
 * Pins follow their elements at once, without polling: a MutationObserver on the page (and on
 * the shadow roots and frames annotated elements live in) says the page changed — look elements
 * up again; a ResizeObserver on those elements and scroll listeners on their scroll ancestors say
 * they moved; history changes (pushState, popstate) say this is another page. The page's changes
 * are watched only while there is something to follow ({@link Follower.watch}): a page without
 * pins pays nothing for its own DOM updates.
 */
import { isShadowRoot } from './dom.js'

export interface FollowEvents {
  /** The DOM changed: anchors must be looked up again. */
  changed(): void
  /** Something moved or resized: positions must be recomputed. */
  moved(): void
  /** The URL changed without a page load. */
  navigated(): void
}

interface NavigationLike {
  addEventListener(type: 'currententrychange', listener: () => void): void
  removeEventListener(type: 'currententrychange', listener: () => void): void
}

export class Follower {
  private readonly mutations: MutationObserver
  private readonly sizes: ResizeObserver
  private observedRoots = new WeakSet<Node>()
  /** Whether the page's changes are watched (there are pins, or the person is annotating). */
  private watching = false
  private started = false
  private sized = new WeakSet<Element>()
  private readonly scrollers = new Set<EventTarget>()
  private readonly restore: (() => void)[] = []

  constructor(
    private readonly events: FollowEvents,
    /** The overlay's host: its own changes are not the page's. */
    private readonly host: Element,
  ) {
    this.mutations = new MutationObserver((records) => {
      if (!records.some((r) => r.target !== host && !host.contains(r.target))) return
      // Scroll containers that left the page are no longer followed.
      for (const s of this.scrollers) {
        if ('isConnected' in s && !(s as Node).isConnected) {
          s.removeEventListener('scroll', this.onScroll)
          this.scrollers.delete(s)
        }
      }
      this.events.changed()
    })
    this.sizes = new ResizeObserver(() => this.events.moved())
  }

  start(): void {
    this.started = true
    if (this.watching) this.watchPage()
    window.addEventListener('popstate', this.onNavigate)
    window.addEventListener('hashchange', this.onNavigate)
    const nav = (window as unknown as { navigation?: NavigationLike }).navigation
    if (nav) {
      nav.addEventListener('currententrychange', this.onNavigate)
      this.restore.push(() => nav.removeEventListener('currententrychange', this.onNavigate))
    } else {
      // No Navigation API: hear pushState/replaceState by wrapping them (passing every call through).
      for (const name of ['pushState', 'replaceState'] as const) {
        const original = history[name]
        const wrapped = function (this: History, ...args: Parameters<History['pushState']>) {
          const result = original.apply(this, args)
          queueMicrotask(() => window.dispatchEvent(new Event('marginalia:navigate')))
          return result
        }
        history[name] = wrapped
        this.restore.push(() => {
          if (history[name] === wrapped) history[name] = original
        })
      }
      window.addEventListener('marginalia:navigate', this.onNavigate)
    }
  }

  /** Watch the page's changes (something on it is followed) or stop (nothing is: no observer runs for the page's own updates). */
  watch(on: boolean): void {
    if (on === this.watching) return
    this.watching = on
    if (!this.started) return
    if (on) {
      this.watchPage()
      return
    }
    this.mutations.disconnect()
    this.observedRoots = new WeakSet()
    this.sizes.disconnect()
    this.sized = new WeakSet()
  }

  /** The page's changes and its size (content growing above a pin moves it). */
  private watchPage(): void {
    this.observeRoot(document)
    this.sizes.observe(document.documentElement)
  }

  stop(): void {
    this.started = false
    this.mutations.disconnect()
    this.sizes.disconnect()
    for (const s of this.scrollers) s.removeEventListener('scroll', this.onScroll)
    this.scrollers.clear()
    window.removeEventListener('popstate', this.onNavigate)
    window.removeEventListener('hashchange', this.onNavigate)
    window.removeEventListener('marginalia:navigate', this.onNavigate)
    for (const r of this.restore.splice(0)) r()
  }

  /** Follow `el`: its size, its scroll ancestors (`clip`), and the shadow roots and frames it is in. */
  track(el: Element, clip: readonly Element[]): void {
    if (!this.sized.has(el)) {
      this.sized.add(el)
      this.sizes.observe(el)
    }
    for (const c of clip) {
      if (c.localName === 'iframe' || c.localName === 'frame') {
        try {
          const win = (c as HTMLIFrameElement).contentWindow
          if (win) this.listenScroll(win)
        } catch {
          // cross-origin: nothing to follow inside
        }
      } else this.listenScroll(c)
    }
    for (let root = el.getRootNode(); root !== document; ) {
      this.observeRoot(root)
      if (isShadowRoot(root)) root = root.host.getRootNode()
      else {
        const fe = (root as Document).defaultView?.frameElement
        if (!fe) break
        root = fe.getRootNode()
      }
    }
  }

  private listenScroll(target: EventTarget): void {
    if (this.scrollers.has(target)) return
    this.scrollers.add(target)
    target.addEventListener('scroll', this.onScroll, { passive: true })
  }

  private observeRoot(root: Node): void {
    if (!this.watching || this.observedRoots.has(root)) return
    this.observedRoots.add(root)
    this.mutations.observe(root, { childList: true, subtree: true, characterData: true, attributes: true })
  }

  private readonly onScroll = (): void => this.events.moved()
  private readonly onNavigate = (): void => this.events.navigated()
}
