/**
 * Attachment routes: upload an image (raw body with an image content type, or multipart/form-data
 * with one file part) and read it back. The type is sniffed from the bytes: a file that is not a
 * PNG, JPEG, WebP or GIF is 415 whatever its header says; over the limit is 413. Served with its
 * sniffed type, `nosniff` and `Content-Disposition` so a browser never renders it as a page. An
 * upload counts against its caller's quota until something references it (uploads.ts).
 */
import { BlobError, SHA256, sha256Of, storeImage } from '../store/blobs/index.js'
import { extensionOf } from '../store/blobs/sniff.js'
import { LIMITS } from '../store/model.js'
import { readBytes } from './body.js'
import { HttpError } from './respond.js'
import { defineRoute, reply, type Route } from './context.js'
import { uploaderOf } from './uploads.js'

/** Room for the multipart envelope around the largest image. */
const ENVELOPE_BYTES = 64 * 1024

/** The file part of a multipart/form-data body (the first part with a filename or an image type). */
function multipartFile(body: Buffer, contentType: string): Buffer {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType)
  const boundary = match?.[1] ?? match?.[2]
  if (!boundary) throw new HttpError(400, 'INVALID_PARAMS', 'body: multipart/form-data without a boundary.')
  const delimiter = Buffer.from(`--${boundary}`)
  let at = body.indexOf(delimiter)
  while (at !== -1) {
    const start = at + delimiter.length
    if (body.subarray(start, start + 2).toString() === '--') break
    const headersEnd = body.indexOf('\r\n\r\n', start)
    if (headersEnd === -1) break
    const headers = body.subarray(start, headersEnd).toString('utf8')
    const next = body.indexOf(delimiter, headersEnd + 4)
    if (next === -1) break
    if (/filename=|content-type:\s*image\//i.test(headers)) return body.subarray(headersEnd + 4, next - 2) // minus the CRLF before the delimiter
    at = next
  }
  throw new HttpError(400, 'INVALID_PARAMS', 'body: the multipart body has no file part; send the image as a part with a filename.')
}

function asHttpError(e: unknown): unknown {
  if (!(e instanceof BlobError)) return e
  if (e.reason === 'PAYLOAD_TOO_LARGE') return new HttpError(413, 'PAYLOAD_TOO_LARGE', e.message, { limit: LIMITS.attachmentBytes })
  if (e.reason === 'UNSUPPORTED_MEDIA_TYPE') return new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', e.message)
  return e
}

export const attachmentRoutes: readonly Route[] = [
  defineRoute({
    method: 'POST',
    path: '/api/attachments',
    tool: 'reply',
    access: { kind: 'caller', roles: ['person', 'agent'], what: 'reply' },
    summary: 'Upload an image (raw image body, or multipart/form-data with one file part); answers its sha256 and URL',
    handler: async (ctx) => {
      const type = ctx.req.headers['content-type'] ?? ''
      const multipart = type.toLowerCase().startsWith('multipart/form-data')
      const limit = LIMITS.attachmentBytes
      const { uploads, store } = ctx.app
      const who = uploaderOf(ctx.caller)
      // Before the body is read: a caller at the quota, or a disk at its floor, is refused at once.
      const announced = Number(ctx.req.headers['content-length'])
      await uploads.admit(who, Number.isSafeInteger(announced) && announced > 0 ? Math.min(announced, limit) : 1)
      let bytes: Buffer
      try {
        const body = await readBytes(ctx.req, ctx.res, multipart ? limit + ENVELOPE_BYTES : limit)
        bytes = multipart ? multipartFile(body, type) : body
      } catch (e) {
        if (e instanceof HttpError && e.status === 413) throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `attachment: larger than the limit of ${limit} bytes; send a smaller image.`, { limit })
        throw e
      }
      try {
        await uploads.admit(who, bytes.length)
        const existed = await store.blobs.has(sha256Of(bytes))
        const stored = await storeImage(store.blobs, bytes, limit)
        uploads.uploaded(who, stored.sha256, stored.bytes, existed)
        reply(ctx, 201, { ...stored, url: `/api/attachments/${stored.sha256}` })
      } catch (e) {
        throw asHttpError(e)
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/attachments/:sha256',
    // An attachment is named by its SHA-256 (a capability: only who saw the record knows it), so <img> can load it without a header.
    access: { kind: 'capability', path: /^\/api\/attachments\/[0-9a-f]{64}$/, what: 'the SHA-256 of the image' },
    readAfterWrite: true,
    summary: 'An uploaded image by its SHA-256, with its sniffed type, nosniff and a sandboxing CSP',
    handler: async (ctx) => {
      const sha = ctx.params.sha256!
      // Only 64 hex digits name a blob: anything else (a path, `..`) is simply not found.
      const found = SHA256.test(sha) ? await ctx.app.store.blobs.get(sha) : undefined
      if (!found) throw new HttpError(404, 'NOT_FOUND', `No attachment ${SHA256.test(sha) ? sha : '(not a sha256)'}.`)
      ctx.res.writeHead(200, {
        ...ctx.headers,
        'Content-Type': found.mime,
        'Content-Length': String(found.bytes.length),
        'X-Content-Type-Options': 'nosniff',
        'Content-Disposition': `inline; filename="${sha}.${extensionOf(found.mime)}"`,
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'Cache-Control': 'private, max-age=31536000, immutable',
      })
      ctx.res.end(ctx.req.method === 'HEAD' ? undefined : Buffer.from(found.bytes))
    },
  }),
]
