/**
 * Freeze the page: pause what moves — CSS animations and transitions and Web
 * Animations (all of them are in `document.getAnimations()`), videos and audio — so a person can
 * annotate a toast before it fades or a hover state before it goes. Same-origin iframes freeze
 * too. What starts while frozen (a transition a hover begins, a new animation) is paused as it
 * starts. Unfreezing resumes exactly what freezing paused; the overlay's own animations never stop.
 */

type Media = HTMLMediaElement

/** What starts moving while the page is frozen (and is paused as it starts). */
const STARTS = ['animationstart', 'transitionrun', 'transitionstart', 'play']

export class Freezer {
  private paused: Animation[] = []
  private media: Media[] = []
  private docs: Document[] = []
  frozen = false

  constructor(
    /** The overlay's host: its animations are not the page's. */
    private readonly host: Element,
  ) {}

  toggle(): boolean {
    if (this.frozen) this.unfreeze()
    else this.freeze()
    return this.frozen
  }

  freeze(): void {
    if (this.frozen) return
    this.frozen = true
    this.docs = documents(document)
    for (const doc of this.docs) {
      this.pauseAnimations(doc)
      for (const m of doc.querySelectorAll<Media>('video, audio')) {
        if (!m.paused) {
          m.pause()
          this.media.push(m)
        }
      }
      for (const type of STARTS) doc.addEventListener(type, this.onStart, true)
    }
  }

  unfreeze(): void {
    if (!this.frozen) return
    this.frozen = false
    for (const doc of this.docs) for (const type of STARTS) doc.removeEventListener(type, this.onStart, true)
    this.docs = []
    for (const a of this.paused.splice(0)) {
      try {
        if (a.playState === 'paused') a.play()
      } catch {
        // a cancelled animation: nothing to resume
      }
    }
    for (const m of this.media.splice(0)) if (m.isConnected) void m.play().catch(() => undefined)
  }

  /** Something began to move while frozen: pause it too. */
  private readonly onStart = (e: Event): void => {
    const t = e.target
    if (e.type === 'play') {
      // Duck-typed: an iframe's elements are of another realm.
      const m = t as Media | null
      if (m && typeof m.pause === 'function') {
        m.pause()
        if (!this.media.includes(m)) this.media.push(m)
      }
      return
    }
    const doc = (t as Node | null)?.ownerDocument ?? document
    this.pauseAnimations(doc)
  }

  private pauseAnimations(doc: Document): void {
    for (const a of doc.getAnimations()) {
      if (a.playState !== 'running' || this.isOurs(a)) continue
      a.pause()
      this.paused.push(a)
    }
  }

  private isOurs(a: Animation): boolean {
    const effect = a.effect as KeyframeEffect | null
    const target = effect && 'target' in effect ? effect.target : null
    if (!target) return false
    for (let n: Node | null = target; n; ) {
      if (n === this.host) return true
      const root = n.getRootNode() as Node & { host?: Element }
      n = root.host ?? null
    }
    return false
  }
}

/** This document and the documents of its same-origin iframes, nested. */
function documents(doc: Document): Document[] {
  const out = [doc]
  for (const f of doc.querySelectorAll('iframe, frame')) {
    try {
      const inner = (f as HTMLIFrameElement).contentDocument
      if (inner) out.push(...documents(inner))
    } catch {
      // cross-origin: out of reach
    }
  }
  return out
}
