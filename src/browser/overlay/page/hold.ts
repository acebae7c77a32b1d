/**
 * The person turned annotate mode on and its chunk is on the way (a round trip to the server):
 * the page's presses and clicks outside the overlay are kept from the page, as annotate mode keeps
 * them — a click meant to annotate the page's Delete button must not delete — and the last click,
 * or Enter on a focused element, is remembered, to be picked once annotate mode is there; so is
 * what the pointer is over, to be highlighted as soon as annotate mode can (no wait for the next move).
 */

/** What the person pointed at while annotate mode was coming: a click (with where) or Enter (without). */
export interface HeldPick {
  readonly element: Element
  readonly at?: { x: number; y: number }
  readonly shift: boolean
}

const HELD = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu'] as const

export class Hold {
  private picked: HeldPick | undefined
  /** The page element the pointer last moved over, while annotate mode was coming. */
  hovered: Element | undefined
  private readonly listening = new AbortController()

  constructor(
    /** The overlay's host: its own events pass. */
    private readonly host: Element,
  ) {
    for (const type of HELD) window.addEventListener(type, this.onEvent, { capture: true, signal: this.listening.signal })
    window.addEventListener('pointermove', this.onMove, { capture: true, passive: true, signal: this.listening.signal })
  }

  /** Enter on a focused page element: remembered (true), as annotate mode would pick it. */
  enter(e: KeyboardEvent): boolean {
    if (e.key !== 'Enter' || e.composedPath().includes(this.host)) return false
    let target = document.activeElement
    while (target?.shadowRoot?.activeElement) target = target.shadowRoot.activeElement
    if (!target || target === document.body || target === document.documentElement) return false
    this.picked = { element: target, shift: e.shiftKey }
    return true
  }

  /** The page gets its events again; what the person pointed at meanwhile, if anything. */
  release(): HeldPick | undefined {
    this.listening.abort()
    return this.picked
  }

  private readonly onMove = (e: PointerEvent): void => {
    const path = e.composedPath()
    const first = path[0]
    this.hovered = first instanceof Element && !path.includes(this.host) ? first : undefined
  }

  private readonly onEvent = (e: Event): void => {
    const path = e.composedPath()
    if (path.includes(this.host)) return
    e.preventDefault()
    e.stopPropagation()
    const first = path[0]
    const m = e as MouseEvent
    if (e.type === 'click' && first instanceof Element) this.picked = { element: first, at: { x: m.clientX, y: m.clientY }, shift: m.shiftKey }
  }
}
