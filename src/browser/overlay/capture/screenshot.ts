/**
 * A picture of the annotated area: the element (or the selection's box) with a margin of the
 * page around it, a thin outline on it, cut to the viewport, at most 1 600 px on the long side
 * and 400 KB (PNG, else WebP, smaller until it fits). Drawn by modern-screenshot from the DOM;
 * cross-origin images it could not read are left out, never an error.
 */
import { domToCanvas } from 'modern-screenshot'

export const MAX_SIDE = 1600
export const MAX_BYTES = 400 * 1024
const MARGIN = 16
const OUTLINE = '#e5484d'

/**
 * Chromium encodes toBlob in idle time, and idle time comes after a frame: on a page where nothing
 * moves (no frames) it waits for a fallback of about a second. Frames are asked for until it is done.
 */
function toBlob(canvas: HTMLCanvasElement, type: string, quality?: number): Promise<Blob | null> {
  return new Promise((resolve) => {
    let done = false
    const tick = (): void => {
      if (!done) requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
    canvas.toBlob(
      (blob) => {
        done = true
        resolve(blob)
      },
      type,
      quality,
    )
  })
}

function crossOrigin(src: string): boolean {
  try {
    const url = new URL(src, location.href)
    return url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== location.origin
  } catch {
    return true
  }
}

/** The area to show: the box with a margin, cut to the viewport (page coordinates of the viewport). */
export function captureArea(box: DOMRect): { x: number; y: number; width: number; height: number } | undefined {
  const x0 = Math.max(0, box.left - MARGIN)
  const y0 = Math.max(0, box.top - MARGIN)
  const x1 = Math.min(window.innerWidth, box.right + MARGIN)
  const y1 = Math.min(window.innerHeight, box.bottom + MARGIN)
  if (x1 - x0 < 1 || y1 - y0 < 1) return undefined
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }
}

/**
 * Capture `box` (viewport coordinates) of the page. `exclude`: the overlay's own host, never drawn.
 * Undefined when there is nothing visible to capture.
 */
export async function captureBox(box: DOMRect, exclude: Element | undefined): Promise<Blob | undefined> {
  const area = captureArea(box)
  if (!area) return undefined
  const root = document.documentElement
  const scale = Math.min(window.devicePixelRatio || 1, MAX_SIDE / Math.max(area.width, area.height))
  // The viewport as drawn: the document at its scroll offset, only the window's size.
  const full = await domToCanvas(root, {
    width: window.innerWidth,
    height: window.innerHeight,
    scale,
    backgroundColor: getComputedStyle(document.body).backgroundColor || '#fff',
    style: { transform: `translate(${-window.scrollX}px, ${-window.scrollY}px)`, transformOrigin: '0 0' },
    filter: (node) => node !== exclude && !(node instanceof HTMLImageElement && crossOrigin(node.currentSrc || node.src)),
    timeout: 800,
  })
  const out = document.createElement('canvas')
  out.width = Math.max(1, Math.round(area.width * scale))
  out.height = Math.max(1, Math.round(area.height * scale))
  const ctx = out.getContext('2d')
  if (!ctx) return undefined
  ctx.drawImage(full, area.x * scale, area.y * scale, out.width, out.height, 0, 0, out.width, out.height)
  ctx.strokeStyle = OUTLINE
  ctx.lineWidth = Math.max(1, Math.round(2 * scale))
  const inset = ctx.lineWidth / 2
  ctx.strokeRect((box.left - area.x) * scale - inset, (box.top - area.y) * scale - inset, box.width * scale + 2 * inset, box.height * scale + 2 * inset)
  return fit(out)
}

/** PNG if it fits in 400 KB, else WebP, else smaller until it does. */
async function fit(canvas: HTMLCanvasElement): Promise<Blob | undefined> {
  let c = canvas
  for (let i = 0; i < 6; i++) {
    const png = await toBlob(c, 'image/png')
    if (png && png.size <= MAX_BYTES) return png
    const webp = await toBlob(c, 'image/webp', 0.85)
    if (webp && webp.type === 'image/webp' && webp.size <= MAX_BYTES) return webp
    const smaller = document.createElement('canvas')
    smaller.width = Math.max(1, Math.round(c.width * 0.7))
    smaller.height = Math.max(1, Math.round(c.height * 0.7))
    smaller.getContext('2d')?.drawImage(c, 0, 0, smaller.width, smaller.height)
    c = smaller
  }
  return undefined
}
