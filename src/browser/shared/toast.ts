/** A short message that shows for a few seconds, then fades (its element's `show` class); `bad` marks a failure. */
export class Toast {
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    readonly element: HTMLElement,
    private readonly ms: number,
  ) {}

  show(message: string, bad = false): void {
    this.element.textContent = message
    this.element.classList.add('show')
    this.element.classList.toggle('bad', bad)
    this.stop()
    this.timer = setTimeout(() => this.element.classList.remove('show', 'bad'), this.ms)
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}
