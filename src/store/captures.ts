/**
 * Pictures of an annotation's element taken now, by a browser that shows its page. The agent's
 * request and the browser's answer are store events (`capture.requested`, `capture.taken`), so
 * they travel like every other change: to the overlay on its session's event stream, between
 * processes through the adapter (a file's watcher, PostgreSQL's LISTEN/NOTIFY). Neither changes a
 * record: the waiting caller takes the picture from the answer.
 */
import { randomBytes } from 'node:crypto'
import { Subject, interval, map, merge, take, timer, type Observable } from 'rxjs'
import { z } from 'zod'
import { Attachment, ElementInfo, Id, LIMITS, type Annotation, type Reply } from './model.js'
import { CAPTURE_ANCHORS } from './vocabulary.js'
import { NotFoundError, ValidationError } from './errors.js'
import { shardGet } from './shards.js'
import type { CaptureTakenEvent, StoreEvent } from './events.js'
import type { DecideContext, Verdict } from './commands.js'

/** How long `capture` waits for a browser by default. */
export const DEFAULT_CAPTURE_TIMEOUT_MS = 10_000
/** The longest a capture may wait. */
export const MAX_CAPTURE_TIMEOUT_MS = 60_000
/** While waiting, other processes' writes are looked for this often (besides the adapter's own watching). */
const CAPTURE_POLL_MS = 100

export const RequestCaptureInput = z.strictObject({
  timeoutMs: z.number().int().min(1).max(MAX_CAPTURE_TIMEOUT_MS, `must be at most ${MAX_CAPTURE_TIMEOUT_MS} ms`),
})
export type RequestCaptureInput = z.input<typeof RequestCaptureInput>

export const CaptureTakenInput = z.strictObject({
  requestId: Id,
  attachment: Attachment,
  url: z.string().min(1).max(LIMITS.url),
  anchor: z.enum(CAPTURE_ANCHORS),
  capturedAt: z.iso.datetime(),
  attachTo: Id.optional(),
  element: ElementInfo.optional(),
  /** The request's one-time token (`capture.requested`): checked by the server that takes the answer, never stored. */
  token: z.string().max(128).optional(),
})
export type CaptureTakenInput = z.input<typeof CaptureTakenInput>

/** What a request is: its id, the page it names and when nobody waits any more. */
export interface CaptureRequest {
  requestId: string
  url: string
  expiresAt: string
}

/** A fresh one-time token for a capture request (128 random bits). */
export function captureToken(): string {
  return randomBytes(16).toString('base64url')
}

export function requestCapture({ state, now, newId }: DecideContext, annotationId: string, args: z.output<typeof RequestCaptureInput>, token: string): Verdict<CaptureRequest> {
  const a = shardGet(state.annotations, annotationId)
  if (!a) throw new NotFoundError('annotation', annotationId)
  const session = shardGet(state.sessions, a.sessionId)
  const request: CaptureRequest = { requestId: newId('capture'), url: a.url || session?.url || '', expiresAt: new Date(Date.parse(now) + args.timeoutMs).toISOString() }
  return {
    drafts: [{ type: 'capture.requested', sessionId: a.sessionId, annotationId, ...request, token }],
    result: () => request,
  }
}

export function captureTaken({ state }: DecideContext, annotationId: string, args: z.output<typeof CaptureTakenInput>): Verdict<{ requestId: string }> {
  const a = shardGet(state.annotations, annotationId)
  if (!a) throw new NotFoundError('annotation', annotationId)
  if (args.attachTo !== undefined) {
    const r = replyFor(a, args.attachTo)
    // One "after" per reply: a second browser's answer to the same request changes nothing.
    if (r.attachments?.some((x) => x.kind === 'after')) return { drafts: [], result: () => ({ requestId: args.requestId }) }
    if ((r.attachments?.length ?? 0) >= LIMITS.attachmentsPerMessage) throw new ValidationError([{ path: 'attachTo', message: `reply ${args.attachTo} has ${LIMITS.attachmentsPerMessage} attachments already` }])
  }
  delete args.token // checked by the server that took the answer; a secret is never stored
  // The element as found: only for an agent's annotation not anchored yet (the first browser's answer wins).
  if (args.element !== undefined && (a.author !== 'agent' || a.element?.fingerprint !== undefined)) delete args.element
  return {
    drafts: [{ type: 'capture.taken', sessionId: a.sessionId, annotationId, ...args }],
    result: () => ({ requestId: args.requestId }),
  }
}

/** The reply `id` of annotation `a` (the one an "after" picture goes on). */
function replyFor(a: Annotation, id: string): Reply {
  const r = a.replies.find((x) => x.id === id)
  if (!r) throw new ValidationError([{ path: 'attachTo', message: `annotation ${a.id} has no reply ${id}` }])
  return r
}

/** What `takePicture` needs from a store. */
export interface CaptureSource {
  readonly changes$: Observable<StoreEvent>
  requestCapture(annotationId: string, input: RequestCaptureInput): Promise<CaptureRequest>
  sync(): Promise<void>
}

/**
 * Ask the browsers for a picture of an annotation's element and wait for the first answer:
 * the answer, or `undefined` once `timeoutMs` passed (or `signal` aborted) without one.
 */
export async function takePicture(
  store: CaptureSource,
  annotationId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ request: CaptureRequest; taken: CaptureTakenEvent | undefined }> {
  // Listening before the request is written: an answer can come before the request's promise resolves.
  const answers: CaptureTakenEvent[] = []
  let wanted: string | undefined
  const found = new Subject<CaptureTakenEvent>()
  const listening = store.changes$.subscribe((e) => {
    if (e.type !== 'capture.taken' || e.annotationId !== annotationId) return
    if (wanted === undefined) answers.push(e)
    else if (e.requestId === wanted) found.next(e)
  })
  try {
    const request = await store.requestCapture(annotationId, { timeoutMs })
    wanted = request.requestId
    const early = answers.find((e) => e.requestId === wanted)
    if (early) return { request, taken: early }
    const taken = await new Promise<CaptureTakenEvent | undefined>((resolve) => {
      const done = (v: CaptureTakenEvent | undefined): void => {
        signal?.removeEventListener('abort', aborted)
        polling.unsubscribe()
        waiting.unsubscribe()
        resolve(v)
      }
      const aborted = (): void => done(undefined)
      const waiting = merge(found.pipe(take(1)), timer(timeoutMs).pipe(map(() => undefined))).subscribe(done)
      // Other processes' answers: the adapter watches too; this keeps the wait short on every adapter.
      const polling = interval(CAPTURE_POLL_MS).subscribe(() => void store.sync().catch(() => {})) // a failed catch-up is retried on the next tick
      if (signal?.aborted) done(undefined)
      else signal?.addEventListener('abort', aborted, { once: true })
    })
    return { request, taken }
  } finally {
    listening.unsubscribe()
    found.complete()
  }
}

