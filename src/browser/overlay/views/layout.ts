/** Where the overlay's fixed panels go: beside what they are about, inside the viewport, clear of the dock. */

export interface Box {
  left: number
  top: number
  right: number
  bottom: number
}

/** A touch screen is the primary pointer: hints say "tap", and name no keys. */
export function coarsePointer(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches
}

/** The visible viewport without scroll bars. */
export function viewport(): { width: number; height: number } {
  return { width: document.documentElement.clientWidth || window.innerWidth, height: document.documentElement.clientHeight || window.innerHeight }
}

export function rectBox(r: DOMRect): Box {
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }
}

export function union(a: Box, b: Box): Box {
  return { left: Math.min(a.left, b.left), top: Math.min(a.top, b.top), right: Math.max(a.right, b.right), bottom: Math.max(a.bottom, b.bottom) }
}

/**
 * What the person sees of the page, in the coordinates fixed elements use: the visual viewport.
 * On a desktop it is the whole viewport; on a phone showing a page slightly wider than itself, or
 * zoomed in, it is the part of the (larger) layout viewport on the screen — where the toolbar and
 * the panels must be.
 */
export function screenBox(): Box {
  const { width, height } = viewport()
  const vv = window.visualViewport
  if (!vv) return { left: 0, top: 0, right: width, bottom: height }
  return { left: vv.offsetLeft, top: vv.offsetTop, right: vv.offsetLeft + Math.min(vv.width, width), bottom: vv.offsetTop + Math.min(vv.height, height) }
}

/**
 * Place a fixed panel of size `w`×`ht` beside `anchor` (right, then left, then below, then
 * above), kept inside what is on screen with a margin and clear of `bottomReserve` pixels at the
 * bottom (the toolbar). Where none fits (a phone), it goes below or above the anchor, where there
 * is more room, and gets at most that room's height (it scrolls inside): it never covers what it
 * is about. Returns its top-left corner and, when it must shrink, its height.
 */
function placeBeside(anchor: Box, w: number, ht: number, margin = 12, gap = 10, bottomReserve = 0): { left: number; top: number; maxHeight?: number } {
  const screen = screenBox()
  const right = screen.right
  const bottom = screen.bottom - bottomReserve
  const clampX = (x: number) => Math.max(screen.left + margin, Math.min(x, right - w - margin))
  const clampY = (y: number) => Math.max(screen.top + margin, Math.min(y, bottom - ht - margin))
  if (anchor.right + gap + w + margin <= right) return { left: anchor.right + gap, top: clampY(anchor.top) }
  if (anchor.left - gap - w >= screen.left + margin) return { left: anchor.left - gap - w, top: clampY(anchor.top) }
  if (anchor.bottom + gap + ht + margin <= bottom) return { left: clampX(anchor.left), top: anchor.bottom + gap }
  if (anchor.top - gap - ht >= screen.top + margin) return { left: clampX(anchor.left), top: anchor.top - gap - ht }
  const below = bottom - margin - (anchor.bottom + gap)
  const above = anchor.top - gap - (screen.top + margin)
  const room = Math.max(below, above)
  // Too little room either side (the element fills the screen): beside it, as before.
  if (room < 160) return { left: clampX(anchor.right + gap), top: clampY(anchor.top) }
  return below >= above ? { left: clampX(anchor.left), top: anchor.bottom + gap, maxHeight: below } : { left: clampX(anchor.left), top: screen.top + margin, maxHeight: above }
}

/** Beside the anchor; without one, above the dock (`reserve` pixels high) at the bottom right of what is on screen. */
export function placePanel(panel: HTMLElement, anchor: Box | undefined, reserve: number): void {
  // Measured at its natural height: a height given last time is not what it needs now.
  panel.style.maxHeight = ''
  const w = panel.offsetWidth || 360
  const ht = panel.offsetHeight || 300
  let left: number
  let top: number
  let maxHeight: number | undefined
  if (anchor) ({ left, top, maxHeight } = placeBeside(anchor, w, ht, 12, 10, reserve))
  else {
    const screen = screenBox()
    left = Math.max(screen.left + 12, screen.right - w - 16)
    top = Math.max(screen.top + 12, screen.bottom - ht - reserve)
  }
  panel.style.left = `${left}px`
  panel.style.top = `${top}px`
  if (maxHeight !== undefined) panel.style.maxHeight = `${Math.floor(maxHeight)}px`
}

/**
 * Whether the visual viewport has resized or panned (a pinch zoom, an on-screen keyboard, a
 * window resized) since the overlay started: until then, on a desktop at scale 1, the dock stays
 * where CSS puts it and placeDock reads nothing.
 */
let visualViewportChanged = false

/**
 * The dock (toolbar, alert, toast) at the bottom right of what is on screen. On a desktop that is
 * where CSS puts it; on a phone it follows the visual viewport (a page wider than the phone, a
 * pinch zoom) and keeps its size on screen.
 */
export function placeDock(dock: HTMLElement, host: Element): void {
  const vv = window.visualViewport
  if (!vv) return
  // A desktop page unzoomed and unmoved since the overlay started: where CSS puts it, with no
  // layout read. A phone is measured (its page may be wider than the screen at scale 1).
  if (!visualViewportChanged && dock.dataset.placed === undefined && Math.abs(vv.scale - 1) <= 0.01 && !coarsePointer()) return
  const frame = host.getBoundingClientRect()
  if (frame.width === 0) return
  const zoomed = Math.abs(vv.scale - 1) > 0.01
  const moved = vv.offsetLeft !== 0 || vv.offsetTop !== 0 || Math.abs(vv.width - frame.width) > 1 || Math.abs(vv.height - frame.height) > 1
  if (!zoomed && !moved) {
    if (dock.dataset.placed !== undefined) {
      dock.removeAttribute('style')
      delete dock.dataset.placed
    }
    return
  }
  const right = frame.width - (vv.offsetLeft + vv.width)
  const bottom = frame.height - (vv.offsetTop + vv.height)
  const scale = 1 / vv.scale
  // Never wider than what is on screen. Written only when it changes: a style write every frame
  // costs the page's own frames (measured: pins of a React list then lagged a frame behind).
  const want = { right: `${right + 16 * scale}px`, bottom: `${bottom + 16 * scale}px`, transform: zoomed ? `scale(${scale})` : 'none', maxWidth: `${Math.max(0, vv.width * vv.scale - 32)}px` }
  const key = JSON.stringify(want)
  if (dock.dataset.placed === key) return
  dock.dataset.placed = key
  Object.assign(dock.style, want, { transformOrigin: '100% 100%' })
}

/**
 * Laying out at most once a frame: `schedule()` lays out in the next frame (scrolls, resizes, a
 * hovered element); `now()` lays out at once — a change the page made, heard in a microtask before
 * anything is painted, so pins move with it — unless it already did this frame.
 */
export class FrameLayout {
  private frame = 0
  private doneThisFrame = false

  constructor(private readonly layout: () => void) {}

  readonly schedule = (): void => {
    if (this.frame) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.layout()
    })
  }

  now(): void {
    if (this.doneThisFrame) return this.schedule()
    this.doneThisFrame = true
    requestAnimationFrame(() => (this.doneThisFrame = false))
    this.layout()
  }

  stop(): void {
    cancelAnimationFrame(this.frame)
  }
}

/**
 * Call `listener` when what is on screen moves: the page scrolls (any scroller) or resizes, and on a
 * phone the visual viewport (pinch zoom, a page wider than the phone). Until `signal` aborts.
 */
export function onViewportChange(listener: () => void, signal: AbortSignal): void {
  window.addEventListener('scroll', listener, { capture: true, passive: true, signal })
  window.addEventListener('resize', listener, { passive: true, signal })
  const visual = (): void => {
    visualViewportChanged = true
    listener()
  }
  window.visualViewport?.addEventListener('resize', visual, { passive: true, signal })
  window.visualViewport?.addEventListener('scroll', visual, { passive: true, signal })
}
