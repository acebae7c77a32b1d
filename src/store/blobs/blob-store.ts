/**
 * Where attachment bytes live: a small content-addressed store beside the StoreAdapter. The
 * annotation or reply holds the record (`Attachment`); the bytes stay out of the JSON store and
 * the event log. The order that keeps references whole: `put` is durable when it resolves, and
 * only then may a command that references the blob be committed. A crash in between leaves an
 * orphan blob (removed by `gcBlobs`), never a reference to a missing one.
 */
import { createHash } from 'node:crypto'
import { MarginaliaError } from '../errors.js'
import { LIMITS, type Attachment } from '../model.js'
import { sniffImage, type ImageMime } from './sniff.js'

export interface StoredBlob {
  sha256: string
  mime: ImageMime
  bytes: number
  width: number
  height: number
}

export interface BlobInfo {
  sha256: string
  /** When the blob was written (ms since the epoch). */
  writtenAt: number
}

/** The contract every blob backend keeps (file, memory, later a database or an object store). */
export interface BlobStore {
  /** Where the blobs are, for messages. */
  readonly location: string
  /** Keep the bytes; durable when the promise resolves. Idempotent (same bytes → same sha256). */
  put(bytes: Uint8Array, mime: ImageMime): Promise<void>
  /** The bytes and type of a blob, or undefined. */
  get(sha256: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined>
  has(sha256: string): Promise<boolean>
  list(): Promise<BlobInfo[]>
  delete(sha256: string): Promise<void>
  /** Bytes free for new blobs where they are written (a file system's), when the backend can tell. */
  freeBytes?(): Promise<number | undefined>
}

export const SHA256 = /^[0-9a-f]{64}$/
export const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/**
 * Whether stored bytes are what the blob's name claims: they hash to `sha256` and sniff as an
 * allowed image. Returns the image type to serve them as, or why they are refused. A blob store
 * checks this before handing bytes out, so a file or row changed behind its back (a planted file,
 * a secret under an image's name) is never served.
 */
export function checkBlob(sha256: string, bytes: Uint8Array): { mime: ImageMime } | { refused: string } {
  const actual = sha256Of(bytes)
  if (actual !== sha256) return { refused: `its bytes do not hash to its name (their SHA-256 is ${actual})` }
  const sniffed = sniffImage(bytes)
  if (!sniffed) return { refused: 'its bytes are not a PNG, JPEG, WebP or GIF image' }
  return { mime: sniffed.mime }
}

/** A reporter of refused blobs that says each problem once, on stderr (stdout may be the MCP protocol). */
export function reportRefusal(): (error: Error) => void {
  const said = new Set<string>()
  return (error) => {
    if (said.has(error.message)) return
    said.add(error.message)
    console.error(`marginalia: ${error.message}`)
  }
}

/**
 * Check and keep an uploaded image: size limit, type from the bytes (not from any header),
 * pixel size. Returns what a record needs. A non-image is a ValidationError with code
 * UNSUPPORTED_MEDIA_TYPE; too many bytes, PAYLOAD_TOO_LARGE.
 */
export async function storeImage(blobs: BlobStore, bytes: Uint8Array, maxBytes: number = LIMITS.attachmentBytes): Promise<StoredBlob> {
  if (bytes.length > maxBytes) throw new BlobError('PAYLOAD_TOO_LARGE', `attachment: ${bytes.length} bytes is more than the limit of ${maxBytes} bytes; send a smaller image.`)
  if (bytes.length === 0) throw new BlobError('EMPTY', 'attachment: the body is empty; send the image bytes.')
  const sniffed = sniffImage(bytes)
  if (!sniffed) throw new BlobError('UNSUPPORTED_MEDIA_TYPE', 'attachment: the bytes are not a PNG, JPEG, WebP or GIF image.')
  const sha256 = sha256Of(bytes)
  await blobs.put(bytes, sniffed.mime)
  return { sha256, mime: sniffed.mime, bytes: bytes.length, width: sniffed.width, height: sniffed.height }
}

/** An attachment refused: invalid input (`INVALID_PARAMS`), with the reason for the HTTP status (413, 415, 400). */
export class BlobError extends MarginaliaError {
  constructor(
    readonly reason: 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'MISSING_ATTACHMENT' | 'EMPTY',
    message: string,
  ) {
    super('INVALID_PARAMS', message, { reason })
  }
}

/** Refuse a command whose attachments are not (yet) in the blob store: nothing is stored then. */
export async function requireBlobs(blobs: BlobStore, attachments: readonly Pick<Attachment, 'sha256'>[] | undefined, field: string): Promise<void> {
  if (!attachments) return
  for (const [i, a] of attachments.entries()) {
    if (!(await blobs.has(a.sha256))) {
      throw new BlobError('MISSING_ATTACHMENT', `${field}.attachments.${i}.sha256: no attachment ${a.sha256} was uploaded; POST the image to /api/attachments first.`)
    }
  }
}

/** In memory, for the memory store and tests. */
export class MemoryBlobStore implements BlobStore {
  readonly location = 'memory'
  private readonly blobs = new Map<string, { bytes: Uint8Array; mime: ImageMime; writtenAt: number }>()
  constructor(private readonly clock: () => number = Date.now) {}
  put(bytes: Uint8Array, mime: ImageMime): Promise<void> {
    const sha = sha256Of(bytes)
    if (!this.blobs.has(sha)) this.blobs.set(sha, { bytes: new Uint8Array(bytes), mime, writtenAt: this.clock() })
    return Promise.resolve()
  }
  get(sha256: string): Promise<{ bytes: Uint8Array; mime: ImageMime } | undefined> {
    const b = this.blobs.get(sha256)
    return Promise.resolve(b && { bytes: b.bytes, mime: b.mime })
  }
  has(sha256: string): Promise<boolean> {
    return Promise.resolve(this.blobs.has(sha256))
  }
  list(): Promise<BlobInfo[]> {
    return Promise.resolve([...this.blobs].map(([sha256, b]) => ({ sha256, writtenAt: b.writtenAt })))
  }
  delete(sha256: string): Promise<void> {
    this.blobs.delete(sha256)
    return Promise.resolve()
  }
}
