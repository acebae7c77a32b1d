/**
 * Always on top (issue 21): the overlay's host is a `popover="manual"` element shown in the
 * browser's top layer, above any `z-index` the page uses. The top layer stacks in the order
 * things enter it, so whenever the page opens a dialog, a popover or goes fullscreen the host is
 * shown again, last. A modal `<dialog>` makes everything outside it inert (a popover above it
 * but outside it cannot be clicked or typed into), so while one is open the host lives inside
 * the topmost modal dialog, and goes back to the root when it closes.
 */

const supported = typeof HTMLElement !== 'undefined' && typeof HTMLElement.prototype.showPopover === 'function'

export class TopLayer {
  private readonly observer: MutationObserver
  /** Modal dialogs in the order they opened: the last one is the one that blocks the page. */
  private modals: HTMLDialogElement[] = []
  private running = false

  constructor(
    private readonly host: HTMLElement,
    /** The host moved or was shown again: positions may need a look. */
    private readonly moved: () => void = () => {},
  ) {
    if (supported) host.setAttribute('popover', 'manual')
    this.observer = new MutationObserver((records) => {
      // A dialog opened or closed; or the page removed the host (or the dialog it was in).
      if (!host.isConnected || records.some((r) => r.type === 'attributes')) this.place(true)
    })
  }

  start(): void {
    this.running = true
    this.place(true)
    this.observer.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['open'] })
    document.addEventListener('toggle', this.onToggle, true)
    document.addEventListener('fullscreenchange', this.onFullscreen)
  }

  stop(): void {
    this.running = false
    this.observer.disconnect()
    document.removeEventListener('toggle', this.onToggle, true)
    document.removeEventListener('fullscreenchange', this.onFullscreen)
    if (supported && this.host.matches(':popover-open')) this.host.hidePopover()
    this.host.remove()
  }

  /** Where the host belongs now: inside the topmost open modal dialog, else the document's root. */
  private parent(): Element {
    this.modals = this.modals.filter((d) => d.isConnected && d.open && d.matches(':modal'))
    for (const d of document.querySelectorAll('dialog[open]')) {
      if (d instanceof HTMLDialogElement && d.matches(':modal') && !this.modals.includes(d)) this.modals.push(d)
    }
    return this.modals[this.modals.length - 1] ?? document.documentElement
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
    if (supported) {
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
