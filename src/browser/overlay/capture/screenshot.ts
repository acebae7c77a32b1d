/**
 * A picture of the annotated area: the element (or the selection's box) with a margin of the
 * page around it, a thin outline on it, secrets painted over (early/redact.ts: masked subtrees,
 * password and card fields, whatever was typed into a field), cut to the viewport, at most 1 600 px on the long side
 * and 400 KB (PNG, else WebP, smaller until it fits). modern-screenshot clones the DOM into an
 * SVG `<foreignObject>`; the overlay loads that SVG as an image and draws it. Cross-origin images
 * it could not read are left out, never an error.
 *
 * A strict Content-Security-Policy: the SVG is an image from a `data:` URL, so the
 * page's `img-src` (or `default-src`) must allow `data:` (a `blob:` URL is no way round: Chromium
 * taints the canvas for an SVG with `<foreignObject>` loaded from one, and it cannot be read).
 * Web fonts are embedded through a `<style>` element, left out when `style-src` blocks inline
 * styles (text in the fallback font). When `data:` images are blocked nothing is drawn:
 * {@link ScreenshotBlocked} names the directive to change — never the blank picture an image
 * that failed to load draws.
 */
import { domToForeignObjectSvg } from 'modern-screenshot'
import { directiveToChange } from '../page/csp.js'
import { maskRects, paintMasks } from '../../early/redact.js'

const MAX_SIDE = 1600
const MAX_BYTES = 400 * 1024
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

/** Whether any part of `el` or of what it holds (positioned descendants included) is drawn in the viewport's rows. */
function reachesViewport(el: Element, bottom: number): boolean {
  const hits = (e: Element): boolean => {
    const r = e.getBoundingClientRect()
    return r.top < bottom && r.bottom > 0 && r.width > 0 && r.height > 0
  }
  if (hits(el) || el.shadowRoot) return true
  for (const d of el.getElementsByTagName('*')) if (hits(d) || d.shadowRoot) return true
  return false
}

/**
 * Whether the clone may leave `node` out: an element wholly below the viewport, with nothing of it
 * in view. The clone copies every element's computed styles, a cost per element: on a long page
 * (a 3 000-row table) that was seconds of the page's main thread, in one task the screenshot's
 * time budget cannot cut, for rows the picture never shows. Leaving out what comes after the
 * visible part does not move it; what is above the viewport stays, as it places what is in view.
 */
function belowView(node: Node, bottom: number): boolean {
  if (!(node instanceof Element) || node === document.body || node === document.documentElement) return false
  const r = node.getBoundingClientRect()
  return r.top >= bottom && !reachesViewport(node, bottom)
}

/** The area to show: the box with a margin, cut to the viewport (page coordinates of the viewport). */
function captureArea(box: DOMRect): { x: number; y: number; width: number; height: number } | undefined {
  const x0 = Math.max(0, box.left - MARGIN)
  const y0 = Math.max(0, box.top - MARGIN)
  const x1 = Math.min(window.innerWidth, box.right + MARGIN)
  const y1 = Math.min(window.innerHeight, box.bottom + MARGIN)
  if (x1 - x0 < 1 || y1 - y0 < 1) return undefined
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }
}

/** The page's policy does not let the picture be drawn: what to add, and to which directive. */
export class ScreenshotBlocked extends Error {
  constructor(
    /** The directive to change: `img-src`, or `default-src` when the policy has no `img-src`. */
    readonly directive: string,
    readonly value = 'data:',
  ) {
    super(`This page's Content-Security-Policy blocks the screenshot: add ${value} to ${directive}.`)
    this.name = 'ScreenshotBlocked'
  }
}

/**
 * How this page lets the picture be drawn: asked at the first capture (a refused probe is a
 * violation the page's own CSP reporting sees, so never before a screenshot is wanted), then
 * remembered (the policy does not change).
 */
type Route = { inlineStyles: boolean } | { blocked: ScreenshotBlocked }
let route: Promise<Route> | undefined

const PROBE_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'

/** Whether the policy lets an image load from `url`; the policy's text when it says no. */
function imageLoads(url: string): Promise<{ ok: boolean; policy?: string; directive?: string }> {
  return new Promise((resolve) => {
    let seen: SecurityPolicyViolationEvent | undefined
    const scheme = url.slice(0, url.indexOf(':'))
    const onViolation = (e: SecurityPolicyViolationEvent): void => {
      if (e.blockedURI === scheme || e.blockedURI.startsWith(`${scheme}:`)) seen = e
    }
    document.addEventListener('securitypolicyviolation', onViolation, true)
    const img = new Image()
    const done = (ok: boolean): void => {
      // The violation event is queued when the load is refused, before the image's error: one more task for it.
      setTimeout(() => {
        document.removeEventListener('securitypolicyviolation', onViolation, true)
        resolve(ok ? { ok } : { ok, ...(seen ? { policy: seen.originalPolicy, directive: seen.effectiveDirective } : {}) })
      }, 0)
    }
    img.onload = () => done(true)
    img.onerror = () => done(false)
    img.src = url
  })
}

/** Whether a `<style>` element may apply here (modern-screenshot embeds web fonts with one). */
function inlineStylesAllowed(): boolean {
  try {
    const doc = document.implementation.createHTMLDocument('')
    const style = doc.createElement('style')
    doc.head.appendChild(style)
    return style.sheet !== null
  } catch {
    return false
  }
}

async function findRoute(): Promise<Route> {
  const inlineStyles = inlineStylesAllowed()
  const data = await imageLoads(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(PROBE_SVG)}`)
  if (data.ok) return { inlineStyles }
  return { blocked: new ScreenshotBlocked(data.policy ? directiveToChange(data.directive ?? 'img-src', data.policy) : 'img-src') }
}

/** The SVG as an image, loaded and decoded; an error when it does not load (never a broken image drawn). */
async function svgImage(svg: SVGElement): Promise<HTMLImageElement> {
  // What modern-screenshot's own serializer leaves out: characters XML does not allow.
  // eslint-disable-next-line no-control-regex
  const xml = new XMLSerializer().serializeToString(svg).replace(/[\u0000-\u0008\v\f\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/gu, '')
  const img = new Image()
  img.decoding = 'sync'
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve()
    img.onerror = () => reject(new Error('the page picture did not load'))
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(xml)}`
  })
  await img.decode()
  if (img.naturalWidth === 0 || img.naturalHeight === 0) throw new Error('the page picture is empty')
  return img
}

/**
 * Capture `box` (viewport coordinates) of the page. `exclude`: the overlay's own host, never drawn.
 * Undefined when there is nothing visible to capture; {@link ScreenshotBlocked} when the page's
 * policy does not let it be drawn.
 */
export async function captureBox(box: DOMRect, exclude: Element | undefined): Promise<Blob | undefined> {
  const area = captureArea(box)
  if (!area) return undefined
  route ??= findRoute()
  const how = await route
  if ('blocked' in how) throw how.blocked
  const root = document.documentElement
  const scale = Math.min(window.devicePixelRatio || 1, MAX_SIDE / Math.max(area.width, area.height))
  // Secrets on the page (masked subtrees, password and card fields, typed values) are painted over:
  // their boxes now and once the clone is taken, in case the page moved them meanwhile.
  const before = maskRects(document, exclude)
  // The viewport as drawn: the document at its scroll offset, only the window's size.
  const svg = await domToForeignObjectSvg(root, {
    width: window.innerWidth,
    height: window.innerHeight,
    style: { transform: `translate(${-window.scrollX}px, ${-window.scrollY}px)`, transformOrigin: '0 0' },
    filter: (node) => node !== exclude && !(node instanceof HTMLImageElement && crossOrigin(node.currentSrc || node.src)) && !belowView(node, window.innerHeight),
    // Web fonts are embedded with a <style> element: where style-src blocks it, text keeps the fallback font.
    font: how.inlineStyles ? {} : false,
    timeout: 800,
  })
  const picture = await svgImage(svg)
  const out = document.createElement('canvas')
  out.width = Math.max(1, Math.round(area.width * scale))
  out.height = Math.max(1, Math.round(area.height * scale))
  const ctx = out.getContext('2d')
  if (!ctx) return undefined
  ctx.fillStyle = getComputedStyle(document.body).backgroundColor || '#fff'
  ctx.fillRect(0, 0, out.width, out.height)
  // The picture is the viewport at 1:1; the area of it, scaled.
  ctx.drawImage(picture, area.x, area.y, area.width, area.height, 0, 0, out.width, out.height)
  paintMasks(ctx, [...before, ...maskRects(document, exclude)], area, scale)
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
