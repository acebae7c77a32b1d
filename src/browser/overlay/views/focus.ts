/** Where keyboard focus goes back to when the open panel (composer, thread, list) closes. */
export class FocusReturn {
  private to: HTMLElement | undefined

  constructor(private readonly shadow: ShadowRoot) {}

  /** What has focus inside the overlay now, else `fallback` (the control that opened the panel). */
  rememberActive(fallback: HTMLElement): void {
    const active = this.shadow.activeElement
    this.to = active instanceof HTMLElement ? active : fallback
  }

  remember(element: HTMLElement): void {
    this.to = element
  }

  /** Back to what was remembered, if it is still there and shown. */
  restore(): void {
    const back = this.to
    this.to = undefined
    if (back && back.isConnected && !back.closest('[hidden]')) back.focus()
  }
}
