/** Where the overlay's fixed panels go: beside what they are about, inside the viewport, clear of the dock. */

export interface Box {
  left: number
  top: number
  right: number
  bottom: number
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
 * Place a fixed panel of size `w`×`ht` beside `anchor` (right, then left, then below, then
 * above), kept inside the viewport with a margin and clear of `bottomReserve` pixels at the
 * bottom (the toolbar). Returns its top-left corner.
 */
function placeBeside(anchor: Box, w: number, ht: number, margin = 12, gap = 10, bottomReserve = 0): { left: number; top: number } {
  const { width: vw, height } = viewport()
  const vh = height - bottomReserve
  const clampX = (x: number) => Math.max(margin, Math.min(x, vw - w - margin))
  const clampY = (y: number) => Math.max(margin, Math.min(y, vh - ht - margin))
  if (anchor.right + gap + w + margin <= vw) return { left: anchor.right + gap, top: clampY(anchor.top) }
  if (anchor.left - gap - w >= margin) return { left: anchor.left - gap - w, top: clampY(anchor.top) }
  if (anchor.bottom + gap + ht + margin <= vh) return { left: clampX(anchor.left), top: anchor.bottom + gap }
  if (anchor.top - gap - ht >= margin) return { left: clampX(anchor.left), top: anchor.top - gap - ht }
  return { left: clampX(anchor.right + gap), top: clampY(anchor.top) }
}

/** Beside the anchor; without one, above the dock (`reserve` pixels high) at the bottom right. */
export function placePanel(panel: HTMLElement, anchor: Box | undefined, reserve: number): void {
  const w = panel.offsetWidth || 360
  const ht = panel.offsetHeight || 300
  let left: number
  let top: number
  if (anchor) ({ left, top } = placeBeside(anchor, w, ht, 12, 10, reserve))
  else {
    const { width, height } = viewport()
    left = Math.max(12, width - w - 16)
    top = Math.max(12, height - ht - reserve)
  }
  panel.style.left = `${left}px`
  panel.style.top = `${top}px`
}
