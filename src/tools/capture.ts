/** The agent looks at the person's page: a picture of an annotation's element as it is now, taken by a browser that shows it. */
import { z } from 'zod'
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_CAPTURE_TIMEOUT_MS, MAX_CAPTURE_TIMEOUT_MS, takePicture } from '../store/captures.js'
import { NoBrowserError } from '../store/errors.js'
import { CAPTURE_ANCHORS } from '../store/vocabulary.js'
import { defineTool, type ToolContext } from './define.js'
import { AnnotationId } from './inputs.js'

const CaptureOut = z.object({
  annotationId: z.string().meta({ listed: false }), // the id asked with
  capturedAt: z.string(),
  url: z.string(),
  anchor: z.enum(CAPTURE_ANCHORS),
  sha256: z.string(),
})
type CaptureOut = z.infer<typeof CaptureOut>

/** A picture of the annotation's element now, or NoBrowserError once `timeoutMs` passed without one. */
async function captureNow(ctx: ToolContext, id: string, timeoutMs: number): Promise<CaptureOut> {
  const { request, taken } = await takePicture(ctx.store, id, timeoutMs, ctx.signal)
  if (ctx.signal.aborted) {
    const e = new Error('The call was cancelled.')
    e.name = 'AbortError'
    throw e
  }
  if (!taken) throw new NoBrowserError(id, request.url, timeoutMs)
  return { annotationId: id, capturedAt: taken.capturedAt, url: taken.url, anchor: taken.anchor, sha256: taken.attachment.sha256 }
}

/** A picture's bytes as MCP image content (nothing when the blob is gone). */
async function imageBlock(ctx: ToolContext, sha256: string): Promise<ContentBlock[]> {
  const blob = await ctx.store.blobs.get(sha256)
  return blob ? [{ type: 'image', data: Buffer.from(blob.bytes).toString('base64'), mimeType: blob.mime }] : []
}

export const capture = defineTool({
  name: 'capture',
  description: "A picture of the annotation's element as a browser shows it now (e.g. after your fix reloaded).",
  input: z.strictObject({
    id: AnnotationId,
    timeoutMs: z.number().int().min(1).max(MAX_CAPTURE_TIMEOUT_MS).optional().describe(`Default ${DEFAULT_CAPTURE_TIMEOUT_MS}`),
  }),
  output: CaptureOut,
  annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
  handler: ({ id, timeoutMs }, ctx) => captureNow(ctx, id, timeoutMs ?? DEFAULT_CAPTURE_TIMEOUT_MS),
  content: async (r, ctx) => [{ type: 'text', text: `${r.annotationId} at ${r.capturedAt} on ${r.url}: element ${r.anchor}.` }, ...(await imageBlock(ctx, r.sha256))],
})
