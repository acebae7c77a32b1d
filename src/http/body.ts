/**
 * Request bodies: JSON only, bounded. A declared Content-Length over the limit is refused
 * before a byte is read; a body without one is counted while it streams and refused as soon as
 * it passes the limit. Either way the connection is closed afterwards, so the rest is never read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './respond.js'

/** `application/json`, with or without parameters such as `charset=utf-8`. */
function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false
  return header.split(';')[0]!.trim().toLowerCase() === 'application/json'
}

export function requireJsonContentType(req: IncomingMessage): void {
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `${req.method} needs "Content-Type: application/json" (got ${req.headers['content-type'] ? `"${req.headers['content-type']}"` : 'none'}).`)
  }
}

/** Whether the request carries a body at all. */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`, { limit })
}

/** Stop reading this request: answer with `Connection: close`, then drop the socket shortly after the answer is sent. */
function abandon(req: IncomingMessage, res: ServerResponse): void {
  req.pause()
  res.shouldKeepAlive = false
  res.once('finish', () => {
    // A moment for the client to read the 413 before the socket goes (closing at once may reset it first).
    setTimeout(() => req.socket.destroy(), 500).unref()
  })
}

/**
 * Read the whole body as UTF-8 text, up to `limit` bytes. On 413 the response is marked
 * `Connection: close` so the unread remainder is never consumed.
 */
export async function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<string> {
  return (await readBytes(req, res, limit)).toString('utf8')
}

/** Read the whole body as bytes, up to `limit` bytes (as `readBody`). */
export function readBytes(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length']
  if (declared !== undefined && Number(declared) > limit) {
    abandon(req, res)
    return Promise.reject(tooLarge(limit))
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const cleanup = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onAborted)
    }
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) {
        cleanup()
        abandon(req, res)
        reject(tooLarge(limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = (): void => {
      cleanup()
      resolve(Buffer.concat(chunks, received))
    }
    // The client broke the request off (or sent a malformed chunk): its fault, not the server's,
    // so a 400 (which it will not read) rather than an internal error with a stack in the log.
    const onError = (error: Error): void => {
      cleanup()
      reject(new HttpError(400, 'INVALID_PARAMS', `The request body could not be read: ${error.message}.`))
    }
    const onAborted = (): void => onError(new Error('the client closed the connection before the end of the body'))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onAborted)
  })
}

/** Parse a JSON body; an empty body is `{}`; malformed JSON is 400 naming the body. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text) as unknown
  } catch (e) {
    throw new HttpError(400, 'INVALID_PARAMS', `body: not valid JSON (${e instanceof Error ? e.message : String(e)})`, {
      issues: [{ path: 'body', message: 'not valid JSON' }],
    })
  }
}

/** POST/PUT/PATCH (and DELETE with a body): JSON content type, bounded size, valid JSON. */
export async function readJson(req: IncomingMessage, res: ServerResponse, limit: number): Promise<unknown> {
  const method = req.method ?? 'GET'
  const needsJson = method === 'POST' || method === 'PUT' || method === 'PATCH' || hasBody(req)
  if (!needsJson) return {}
  requireJsonContentType(req)
  return parseJson(await readBody(req, res, limit))
}
