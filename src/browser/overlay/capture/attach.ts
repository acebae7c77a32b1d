/**
 * What goes with an annotation besides the words: the element screenshot, the images the person
 * pasted, the page log, computed styles and the accessible role/name. Uploaded to
 * `POST /api/attachments` first (the server keeps the bytes durably), then referenced by record.
 * Never blocks sending for long: the screenshot gets 1 s (capture and upload; `data-screenshot-budget`
 * on the script tag changes it), or is left out and the person is told.
 */
import { isSensitiveElement } from '../../early/redact.js'
import type { Uploader } from '../../shared/api.js'
import type { Attachment, NewAnnotation } from '../../shared/types.js'
import { MAX_IMAGES } from '../../shared/image-tray.js'
import { accessibleName, accessibleRole } from '../anchor/aria.js'
import { computedStyles } from './styles.js'
import type { PageLogHandle } from '../../early/page-log.js'
import { ScreenshotBlocked, captureBox } from './screenshot.js'
import { viewRect } from '../anchor/dom.js'

const SCREENSHOT_BUDGET_MS = 1_000

function within<T>(ms: number, work: Promise<T>, late?: () => void): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      late?.()
      resolve(undefined)
    }, ms)
    work.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      () => {
        clearTimeout(timer)
        resolve(undefined)
      },
    )
  })
}

export interface Extras {
  /** Where the screenshot and pasted images are uploaded (the server, as the person who sends). */
  api: Uploader
  element?: Element
  /** The selection's box, when the annotation is about selected text. */
  rect?: DOMRect
  screenshot: boolean
  images: readonly Blob[]
  log: PageLogHandle | undefined
  /** The overlay's host: left out of the screenshot. */
  exclude?: Element
  /** How long the screenshot may take, capture and upload (default SCREENSHOT_BUDGET_MS). */
  budgetMs?: number
  /** Draws the picture instead of the DOM capture (the extension's, from the browser's own view of the tab); undefined falls back to it. */
  capture?: ((box: DOMRect, exclude?: Element) => Promise<Blob | undefined>) | undefined
  /** The screenshot was left out: the page's Content-Security-Policy blocks it, it took longer than the budget (`slow`), or it could not be drawn (undefined). */
  missing?: (why: ScreenshotBlocked | 'slow' | undefined) => void
}

/** Element styles and role/name: synchronous, at once. */
function addElementContext(body: NewAnnotation, element: Element | undefined): void {
  if (!element || !body.element) return
  try {
    body.element.styles = computedStyles(element)
    const role = accessibleRole(element)
    if (role) body.element.role = role
    // A masked element's name could be its very contents.
    const name = isSensitiveElement(element) ? undefined : accessibleName(element, role)
    if (name) body.element.accessibleName = name
  } catch {
    // a detached element: no styles
  }
}

/** What "Sent as #n" adds when the screenshot was left out (`why`: as `Extras.missing` says it). */
function missingShotNote(why: ScreenshotBlocked | 'slow' | undefined, budgetMs: number): string {
  if (why === 'slow') return `without its screenshot: it took longer than ${budgetMs / 1000} s (data-screenshot-budget on the script tag allows more).`
  if (why) return `without its screenshot: this page's Content-Security-Policy blocks it (add ${why.value} to ${why.directive}).`
  return 'without its screenshot: it could not be drawn on this page.'
}

/** The annotation with its context and attachments; what could not be had in time is left out. */
async function withExtras(body: NewAnnotation, extras: Extras): Promise<NewAnnotation> {
  const out: NewAnnotation = { ...body, ...(body.element ? { element: { ...body.element } } : {}) }
  addElementContext(out, extras.element)
  const entries = extras.log?.recent() ?? []
  if (entries.length > 0) out.context = { entries }
  const box = extras.rect ?? extras.element?.getBoundingClientRect()
  const budget = extras.budgetMs ?? SCREENSHOT_BUDGET_MS
  const shot =
    extras.screenshot && box
      ? within(
          budget,
          (extras.capture?.(box, extras.exclude) ?? Promise.resolve(undefined)).then((b) => b ?? captureBox(box, extras.exclude)).then(
            (blob) => (blob ? extras.api.upload(blob, 'screenshot', budget) : undefined),
            (error: unknown) => {
              extras.missing?.(error instanceof ScreenshotBlocked ? error : undefined)
              return undefined
            },
          ),
          () => extras.missing?.('slow'),
        )
      : Promise.resolve(undefined)
  const pasted = Promise.all(extras.images.slice(0, MAX_IMAGES).map((b) => extras.api.upload(b, 'image').catch(() => undefined)))
  const [s, images] = await Promise.all([shot, pasted])
  const attachments = [s, ...images].filter((a): a is Attachment => a !== undefined)
  if (attachments.length > 0) out.attachments = attachments
  return out
}

/**
 * What the composer sends, with its extras: the box of an element inside an iframe is taken in
 * this page's viewport (what the screenshot shows), and a screenshot left out comes back as the
 * words "Sent as #n" adds (`blocked` hears a policy that blocks it, to say so in the box too).
 */
export async function gather(
  body: NewAnnotation,
  target: { element: Element; rect?: DOMRect | undefined },
  o: Omit<Extras, 'element' | 'rect' | 'missing'> & { blocked: (why: ScreenshotBlocked) => void },
): Promise<{ body: NewAnnotation; note?: string }> {
  const { blocked, ...extras } = o
  const { element } = target
  const rect = target.rect ?? (element.ownerDocument !== document ? viewRect(element) : undefined)
  let note: string | undefined
  const missing = (why: ScreenshotBlocked | 'slow' | undefined): void => {
    note = missingShotNote(why, extras.budgetMs ?? SCREENSHOT_BUDGET_MS)
    if (why && why !== 'slow') blocked(why)
  }
  const full = await withExtras(body, { ...extras, element, ...(rect ? { rect } : {}), missing }).catch(() => body)
  return note === undefined ? { body: full } : { body: full, note }
}
