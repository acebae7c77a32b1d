/**
 * What an image really is, from its first bytes: PNG, JPEG, GIF or WebP, with its pixel size.
 * The type a client declares is never trusted (a file that is not an image is refused).
 */
import type { Attachment } from '../model.js'

export type ImageMime = Attachment['mime']
export interface SniffedImage {
  mime: ImageMime
  width: number
  height: number
}

const EXTENSIONS: Record<ImageMime, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' }
export const extensionOf = (mime: ImageMime): string => EXTENSIONS[mime]
export const mimeOfExtension = (ext: string): ImageMime | undefined =>
  (Object.keys(EXTENSIONS) as ImageMime[]).find((m) => EXTENSIONS[m] === ext)

const ascii = (b: Uint8Array, at: number, s: string): boolean => {
  if (b.length < at + s.length) return false
  for (let i = 0; i < s.length; i++) if (b[at + i] !== s.charCodeAt(i)) return false
  return true
}
const be16 = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!
const be32 = (b: Uint8Array, at: number): number => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!
const le16 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8)
const le24 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)

function jpegSize(b: Uint8Array): { width: number; height: number } | undefined {
  let at = 2
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined
    const marker = b[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    const length = be16(b, at + 2)
    // Start-of-frame markers (baseline, progressive …), not DHT (c4), JPG (c8) or DAC (cc).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: be16(b, at + 5), width: be16(b, at + 7) }
    }
    at += 2 + length
  }
  return undefined
}

function webpSize(b: Uint8Array): { width: number; height: number } | undefined {
  if (ascii(b, 12, 'VP8X') && b.length >= 30) return { width: le24(b, 24) + 1, height: le24(b, 27) + 1 }
  if (ascii(b, 12, 'VP8L') && b.length >= 25 && b[20] === 0x2f) {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24)
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
  }
  if (ascii(b, 12, 'VP8 ') && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff }
  }
  return undefined
}

/** The image's type and size, or undefined when the bytes are not a PNG, JPEG, GIF or WebP image. */
export function sniffImage(bytes: Uint8Array): SniffedImage | undefined {
  const b = bytes
  let size: { width: number; height: number } | undefined
  let mime: ImageMime | undefined
  if (b.length >= 24 && b[0] === 0x89 && ascii(b, 1, 'PNG\r\n\x1a\n') && ascii(b, 12, 'IHDR')) {
    mime = 'image/png'
    size = { width: be32(b, 16), height: be32(b, 20) }
  } else if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    mime = 'image/jpeg'
    size = jpegSize(b)
  } else if (b.length >= 10 && (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'))) {
    mime = 'image/gif'
    size = { width: le16(b, 6), height: le16(b, 8) }
  } else if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) {
    mime = 'image/webp'
    size = webpSize(b)
  }
  if (mime === undefined || size === undefined || size.width < 1 || size.height < 1) return undefined
  return { mime, ...size }
}
