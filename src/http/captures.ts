/**
 * A browser's answer to a capture request: the overlay that heard `capture.requested` on its
 * session's stream uploaded the picture (`POST /api/attachments`) and names it here; the store
 * writes `capture.taken`, which the waiting agent hears in whichever process it runs.
 *
 * An answer to an agent's `capture` must carry the request's one-time token, which travels only
 * with the `capture.requested` event (the page's event stream): a caller that merely knows the
 * request's id — or answers a second time — is refused with 403. The server learns each request's
 * token from the store's changes (whichever process wrote the request) and forgets it when it is
 * used or expired. Team mode also lets only people answer (the route's roles).
 */
import { timingSafeEqual } from 'node:crypto'
import type { Subscription } from 'rxjs'
import { CaptureTakenInput } from '../store/captures.js'
import type { Store } from '../store/store.js'
import { defineRoute, reply, type Route } from './context.js'
import { HttpError } from './respond.js'

/** Requests remembered at most (each lives at most a minute): a flood of requests cannot grow the map without end. */
const MAX_PENDING = 10_000

/** The tokens of the capture requests still open, as this server heard them. */
export class CaptureTokens {
  private readonly pending = new Map<string, { token: string; annotationId: string; expiresAt: number }>()
  private readonly subscription: Subscription

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.subscription = store.changes$.subscribe((e) => {
      if (e.type !== 'capture.requested' || e.token === undefined) return
      this.prune()
      if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!)
      this.pending.set(e.requestId, { token: e.token, annotationId: e.annotationId, expiresAt: Date.parse(e.expiresAt) })
    })
  }

  /**
   * Whether the answer may be recorded: an answer to an agent's request (an id this server heard
   * as `capture.requested`, or shaped like one) needs its token, once. Other answers — the "after"
   * picture of a resolve, anchoring an agent's annotation — name a reply or an annotation instead.
   */
  take(annotationId: string, requestId: string, token: string | undefined): void {
    const open = this.pending.get(requestId)
    if (!open && !requestId.startsWith('cap_')) return
    if (!open || open.annotationId !== annotationId || open.expiresAt < this.now()) {
      throw new HttpError(403, 'FORBIDDEN', `No open capture request ${requestId} on annotation ${annotationId}: it expired, was answered already, or was never asked here.`, { requestId })
    }
    if (token === undefined || !sameSecret(token, open.token)) {
      throw new HttpError(403, 'FORBIDDEN', `The answer to capture request ${requestId} needs the token that came with the request (token): only the page that heard the request answers it.`, { requestId, field: 'token' })
    }
    this.pending.delete(requestId)
  }

  stop(): void {
    this.subscription.unsubscribe()
  }

  private prune(): void {
    const now = this.now()
    for (const [id, open] of this.pending) if (open.expiresAt < now) this.pending.delete(id)
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export const captureRoutes: readonly Route[] = [
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/captures',
    access: { kind: 'caller', roles: ['person'], what: 'answer capture requests' },
    summary: "A browser's picture of an annotation's element, answering a capture request (upload the image first; an agent's request needs its token)",
    input: { body: CaptureTakenInput },
    handler: async (ctx, input) => {
      const body = await input.body()
      ctx.app.captures.take(ctx.params.id!, body.requestId, body.token)
      const { token: _token, ...answer } = body
      return reply(ctx, 201, await ctx.app.store.recordCapture(ctx.params.id!, answer))
    },
  }),
]
