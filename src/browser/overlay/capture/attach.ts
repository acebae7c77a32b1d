/**
 * What goes with an annotation besides the words: the element screenshot, the images the person
 * pasted, the page log, computed styles and the accessible role/name. Uploaded to
 * `POST /api/attachments` first (the server keeps the bytes durably), then referenced by record.
 * Never blocks sending for long: the screenshot gets 1 s (capture and upload; `data-screenshot-budget`
 * on the script tag changes it), or is left out and the person is told.
 */
import type { Attachment, NewAnnotation } from '../../shared/types.js'
import { accessibleName, accessibleRole, computedStyles } from './element-context.js'
import type { PageLog } from './page-log.js'
import { ScreenshotBlocked, captureBox } from './screenshot.js'
import { viewRect } from '../anchor/dom.js'

export const SCREENSHOT_BUDGET_MS = 1_000
const UPLOAD_TIMEOUT_MS = 15_000
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024
export const MAX_IMAGES = 5

type Stored = Omit<Attachment, 'id' | 'kind'>

function newId(): string {
  return `att_${typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function' ? crypto.randomUUID().slice(0, 12) : Math.random().toString(36).slice(2, 14)}`
}

let uploadHeaders: () => Record<string, string> = () => ({})
/** Who uploads (a signed-in person's bearer header, issue 23). */
export function setUploadHeaders(headers: () => Record<string, string>): void {
  uploadHeaders = headers
}

/** Upload one image; the server sniffs its type and answers with the record. */
export async function upload(server: string, blob: Blob, kind: Attachment['kind'], timeoutMs = UPLOAD_TIMEOUT_MS): Promise<Attachment> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  try {
    const response = await fetch(`${server}/api/attachments`, { method: 'POST', headers: { ...uploadHeaders(), 'Content-Type': blob.type || 'application/octet-stream' }, body: blob, signal: controller.signal, credentials: 'omit' })
    if (!response.ok) throw new Error(`upload refused (${response.status})`)
    const s = (await response.json()) as Stored
    return { id: newId(), kind, mime: s.mime, bytes: s.bytes, width: s.width, height: s.height, sha256: s.sha256 }
  } finally {
    clearTimeout(timer)
  }
}

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
  server: string
  element?: Element
  /** The selection's box, when the annotation is about selected text. */
  rect?: DOMRect
  screenshot: boolean
  images: readonly Blob[]
  log: PageLog | undefined
  /** The overlay's host: left out of the screenshot. */
  exclude?: Element
  /** How long the screenshot may take, capture and upload (default SCREENSHOT_BUDGET_MS). */
  budgetMs?: number
  /** The screenshot was left out: the page's Content-Security-Policy blocks it, it took longer than the budget (`slow`), or it could not be drawn (undefined). */
  missing?: (why: ScreenshotBlocked | 'slow' | undefined) => void
}

/** Element styles and role/name: synchronous, at once. */
export function addElementContext(body: NewAnnotation, element: Element | undefined): void {
  if (!element || !body.element) return
  try {
    body.element.styles = computedStyles(element)
    const role = accessibleRole(element)
    if (role) body.element.role = role
    const name = accessibleName(element, role)
    if (name) body.element.accessibleName = name
  } catch {
    // a detached element: no styles
  }
}

/** What "Sent as #n" adds when the screenshot was left out (`why`: as `Extras.missing` says it). */
export function missingShotNote(why: ScreenshotBlocked | 'slow' | undefined, budgetMs: number): string {
  if (why === 'slow') return `without its screenshot: it took longer than ${budgetMs / 1000} s (data-screenshot-budget on the script tag allows more).`
  if (why) return `without its screenshot: this page's Content-Security-Policy blocks it (add ${why.value} to ${why.directive}).`
  return 'without its screenshot: it could not be drawn on this page.'
}

/** The annotation with its context and attachments; what could not be had in time is left out. */
export async function withExtras(body: NewAnnotation, extras: Extras): Promise<NewAnnotation> {
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
          captureBox(box, extras.exclude).then(
            (blob) => (blob ? upload(extras.server, blob, 'screenshot', budget) : undefined),
            (error: unknown) => {
              extras.missing?.(error instanceof ScreenshotBlocked ? error : undefined)
              return undefined
            },
          ),
          () => extras.missing?.('slow'),
        )
      : Promise.resolve(undefined)
  const pasted = Promise.all(extras.images.slice(0, MAX_IMAGES).map((b) => upload(extras.server, b, 'image').catch(() => undefined)))
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

/** Which of `files` may be attached (type and size), and why the others may not. */
export function acceptImages(files: readonly File[], already: number): { ok: File[]; refused: string[] } {
  const ok: File[] = []
  const refused: string[] = []
  for (const f of files) {
    if (!(IMAGE_TYPES as readonly string[]).includes(f.type)) refused.push(`${f.name || 'file'}: not a PNG, JPEG, WebP or GIF image`)
    else if (f.size > MAX_IMAGE_BYTES) refused.push(`${f.name || 'image'}: larger than 5 MB`)
    else if (already + ok.length >= MAX_IMAGES) refused.push(`${f.name || 'image'}: at most ${MAX_IMAGES} images per message`)
    else ok.push(f)
  }
  return { ok, refused }
}
