/**
 * Reading a Server-Sent Events body: its blocks (the lines up to a blank line) and the fields of
 * one. The overlay's and the inbox's live stream (live.ts) and the extension's shared stream
 * (extension/stream-hub.ts) read the server's frames with these.
 */

/** One block's fields: its id, its event type (`message` when it names none) and its data lines joined (undefined when it has none); comments are left out. A tuple: the overlay's script counts its bytes. */
export function sseFields(block: string): [id: string | undefined, type: string, data: string | undefined] {
  let id: string | undefined
  let type = 'message'
  const data: string[] = []
  // A comment (`:` first) names no field, nor does an empty line: both are left out below.
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') id = value
    else if (field === 'event') type = value
    else if (field === 'data') data.push(value)
  }
  return [id, type, data.length ? data.join('\n') : undefined]
}

/**
 * Each block of `body` as it comes (CR LF and CR read as LF), without its blank line, until `each`
 * returns false or the body ends. The body's own reader and one decoder: no TransformStream and
 * pipe between them, which cost the page a chain of promises per chunk and their set-up at every
 * connect.
 */
export async function readSseBlocks(body: ReadableStream<Uint8Array>, each: (block: string) => boolean): Promise<void> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n')
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at)
      buffer = buffer.slice(at + 2)
      if (!each(block)) return
    }
  }
}
