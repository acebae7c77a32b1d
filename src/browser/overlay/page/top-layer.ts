/**
 * Always on top. Until something needs more, the host is a fixed element at the highest
 * `z-index`, the last child of the document's root: above the page's furniture at that z-index
 * (equal z-indexes stack in tree order). It enters the browser's top layer — a `popover="manual"`
 * shown, above anything in the page's stacking — only when the page puts something there (a modal
 * dialog, a popover, fullscreen): showing a popover costs the page a style and layout pass, which a
 * page that never uses the top layer does not pay.
 * Once there it stays there; the top layer stacks in the order things enter it, so whenever the
 * page opens a dialog, a popover or goes fullscreen the host is shown again, last. A modal `<dialog>` makes everything outside it inert (a popover above it
 * but outside it cannot be clicked or typed into), so while one is open the host lives inside
 * the topmost modal dialog, and goes back to the root when it closes.
 *
 * Modal dialogs of web components: a `<dialog>` in an open shadow root is opened
 * without a word to the document — a MutationObserver on `document` does not see into shadow
 * trees, `toggle` is not composed. So every open shadow root found is observed as well (same
 * observer, same `open` attribute; its `toggle` events caught on the root): those of the page once
 * the person has first annotated (one walk, asked for by annotate mode when the browser is idle
 * after its first highlight), those of elements added later (only the added subtrees are
 * looked at), those the overlay's composed-tree walker meets (anchor/dom.ts), and those on the
 * composed path of a focus or pointer event — `showModal()` focuses inside the dialog, which
 * catches a component whose shadow root was attached with no mutation to see (an upgrade).
 */
import { isShadowRoot, onShadowRoot } from '../anchor/dom.js'

const OBSERVED: MutationObserverInit = { subtree: true, childList: true, attributes: true, attributeFilter: ['open'] }
/** Composed events that pass through the shadow roots they happen in. */
const COMPOSED = ['focusin', 'pointerdown'] as const

const supported = typeof HTMLElement !== 'undefined' && typeof HTMLElement.prototype.showPopover === 'function'

/** Whether the focus (through open shadow roots) is in an open modal dialog. */
function focusInModal(): boolean {
  let focused = document.activeElement
  while (focused?.shadowRoot?.activeElement) focused = focused.shadowRoot.activeElement
  return focused?.closest('dialog')?.matches(':modal') ?? false
}

export class TopLayer {
  private readonly observer: MutationObserver
  /** Modal dialogs in the order they opened: the last one is the one that blocks the page. */
  private modals: HTMLDialogElement[] = []
  private running = false
  /** Open shadow roots observed, nested ones too (not the overlay's own). */
  private readonly roots = new Set<ShadowRoot>()
  private stopFinding: () => void = () => {}
  /** Whether the host is a popover in the top layer (from the first time it had to be, on). */
  private promoted = false
  /** Whether the page's shadow roots have been walked (scanOnce). */
  private scanned = false

  constructor(
    private readonly host: HTMLElement,
    /** The host moved or was shown again: positions may need a look. */
    private readonly moved: () => void = () => {},
  ) {
    this.observer = new MutationObserver((records) => {
      // Shadow roots of what was added (custom elements attach theirs when created or connected).
      for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1 && n !== host) this.scan(n as Element)
      // A dialog opened or closed; or the page removed the host (or the dialog it was in).
      if (!host.isConnected || records.some((r) => r.type === 'attributes')) this.place(true)
    })
  }

  start(): void {
    this.running = true
    this.observer.observe(document, OBSERVED)
    // No walk of the page at start (a query over every element costs a page of thousands of them
    // milliseconds): a modal dialog already open holds the focus (showModal() moves it in), and
    // fullscreen is a property. A popover the page opened before the overlay came is met at its
    // next toggle or the press of Annotate (raise).
    if (document.fullscreenElement || focusInModal()) this.place(false)
    document.addEventListener('toggle', this.onToggle, true)
    document.addEventListener('fullscreenchange', this.onFullscreen)
    for (const type of COMPOSED) document.addEventListener(type, this.onComposed, { capture: true, passive: true })
    this.stopFinding = onShadowRoot((root) => this.watch(root))
  }

  stop(): void {
    this.running = false
    this.observer.disconnect()
    document.removeEventListener('toggle', this.onToggle, true)
    document.removeEventListener('fullscreenchange', this.onFullscreen)
    for (const type of COMPOSED) document.removeEventListener(type, this.onComposed, { capture: true })
    for (const root of this.roots) root.removeEventListener('toggle', this.onToggle, true)
    this.roots.clear()
    this.stopFinding()
    if (this.promoted && this.host.matches(':popover-open')) this.host.hidePopover()
    this.host.remove()
  }

  /**
   * The person starts annotating: nothing of the page may cover the picker's marks. Already in
   * the top layer: shown again, last. Else the page's top layer is looked at (a dialog or popover
   * the watch has not heard of yet goes under the host, promoted), and the host goes back to being
   * the root's last child if the page appended something after it — without entering the top
   * layer, which would cost a page with thousands of elements a style and layout pass at the
   * press of Annotate. With `walk`, the page's shadow roots are walked first (the first time).
   */
  raise(walk?: boolean): void {
    if (!this.running) return
    if (walk) this.scanOnce()
    if (this.promoted) return this.place(true)
    const root = document.documentElement
    if (this.host.parentNode === root && root.lastElementChild !== this.host) root.appendChild(this.host)
    this.place(false)
  }

  /** The host becomes a popover: shown by place(), from now on. */
  private promote(): void {
    if (!supported) return
    this.promoted = true
    this.host.setAttribute('popover', 'manual')
  }

  /** Whether the page has something in the top layer: a modal dialog (the host goes into it), an open popover, a fullscreen element. */
  private pageInTopLayer(parent: Element): boolean {
    if (parent !== document.documentElement || document.fullscreenElement) return true
    for (const root of [document, ...this.roots]) if (root.querySelector(':popover-open')) return true
    return false
  }

  /** Observe an open shadow root (and those inside it); a modal dialog already open in it is taken at once. */
  private watch(root: ShadowRoot): void {
    if (!this.running || this.roots.has(root) || root === this.host.shadowRoot) return
    this.roots.add(root)
    this.observer.observe(root, OBSERVED)
    root.addEventListener('toggle', this.onToggle, true)
    this.scan(root)
    if (this.newModal(root)) this.place(true)
  }

  /**
   * The page's open shadow roots, walked once: once the person has annotated, not at start nor
   * between the press and the picker's first highlight — a walk of every element costs a page of
   * 10 000 rows tens of milliseconds. Until then the shadow roots come from what is added, from
   * the composed walker and from focus and presses (`showModal()` focuses inside its dialog).
   */
  private scanOnce(): void {
    if (this.scanned) return
    this.scanned = true
    this.scan(document.documentElement)
  }

  /** The open shadow roots in `node`'s subtree (`node`'s own too). */
  private scan(node: Element | ShadowRoot): void {
    if (node === this.host) return
    if ('shadowRoot' in node && node.shadowRoot) this.watch(node.shadowRoot)
    for (const el of node.querySelectorAll('*')) if (el.shadowRoot && el !== this.host) this.watch(el.shadowRoot)
  }

  /** Whether `root` holds an open modal dialog the overlay is not in yet. */
  private newModal(root: Document | ShadowRoot): boolean {
    for (const d of root.querySelectorAll('dialog[open]')) if (d.matches(':modal') && !this.modals.includes(d as HTMLDialogElement)) return true
    return false
  }

  /** Where the host belongs now: inside the topmost open modal dialog, else the document's root. */
  private parent(): Element {
    this.modals = this.modals.filter((d) => d.isConnected && d.open && d.matches(':modal'))
    for (const root of this.roots) if (!root.host.isConnected) this.forget(root)
    for (const root of [document, ...this.roots]) {
      for (const d of root.querySelectorAll('dialog[open]')) {
        if (d instanceof HTMLDialogElement && d.matches(':modal') && !this.modals.includes(d)) this.modals.push(d)
      }
    }
    return this.modals[this.modals.length - 1] ?? document.documentElement
  }

  /** A shadow root whose host left the page: no longer looked in (the observer lets go of it with its nodes). */
  private forget(root: ShadowRoot): void {
    this.roots.delete(root)
    root.removeEventListener('toggle', this.onToggle, true)
  }

  /**
   * Shadow roots on a composed event's path (a focus moved by showModal(), a press in a component).
   * Only an event whose target (as the document sees it) hosts an open shadow root can have come
   * from one: any other focus or press costs a property read, not a path.
   */
  private readonly onComposed = (e: Event): void => {
    if (!(e.target as { shadowRoot?: ShadowRoot | null } | null)?.shadowRoot) return
    for (const n of e.composedPath()) if (n instanceof Node && isShadowRoot(n)) this.watch(n)
  }

  /** Into its place and (again) last in the top layer. */
  private place(reshow: boolean): void {
    if (!this.running) return
    const parent = this.parent()
    const focused = this.host.shadowRoot?.activeElement
    let changed = false
    if (this.host.parentNode !== parent) {
      parent.appendChild(this.host)
      changed = true
    }
    if (!this.promoted && supported && this.pageInTopLayer(parent)) this.promote()
    if (this.promoted) {
      try {
        const open = this.host.matches(':popover-open')
        if (open && (reshow || changed)) this.host.hidePopover()
        if (!open || reshow || changed) this.host.showPopover()
      } catch {
        // Not connected or not a popover any more (the page removed the attribute): it still shows, in the page's stacking.
      }
    }
    // Moving the host drops focus: the person was typing, they go on typing.
    if (changed && focused instanceof HTMLElement && this.host.shadowRoot?.activeElement !== focused) focused.focus({ preventScroll: true })
    this.moved()
  }

  private readonly onToggle = (e: Event): void => {
    if (e.target === this.host) return
    if ((e as ToggleEvent).newState === 'open') this.place(true)
  }

  private readonly onFullscreen = (): void => this.place(true)
}
