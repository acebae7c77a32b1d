/**
 * A browser's answer to a capture request: the overlay that heard `capture.requested` on its
 * session's stream uploaded the picture (`POST /api/attachments`) and names it here; the store
 * writes `capture.taken`, which the waiting agent hears in whichever process it runs.
 */
import { CaptureTakenInput } from '../store/captures.js'
import { defineRoute, reply, type Route } from './context.js'

export const captureRoutes: readonly Route[] = [
  defineRoute({
    method: 'POST',
    path: '/api/annotations/:id/captures',
    access: { kind: 'caller', roles: ['person'], what: 'answer capture requests' },
    summary: "A browser's picture of an annotation's element, answering a capture request (upload the image first)",
    input: { body: CaptureTakenInput },
    handler: async (ctx, input) => reply(ctx, 201, await ctx.app.store.recordCapture(ctx.params.id!, await input.body())),
  }),
]
