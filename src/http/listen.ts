/** Binding a port: the backlog, what a bind error says, malformed requests, and whether a port is free. */
import { createServer as createNetServer, type Socket } from 'node:net'

/**
 * Connections the kernel may hold before the server accepts them (node's default is 511; the
 * system caps it at net.core.somaxconn). A burst beyond it has SYNs dropped (retried a second
 * later) or, with SYN cookies, connections reset.
 */
export const LISTEN_BACKLOG = 4_096

/** Statuses for the parser and timeout errors node reports as `clientError` (as node's own defaults). */
const CLIENT_ERROR_STATUS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
}

/**
 * What node answers without a `clientError` listener: the status that says what was wrong (408
 * for a request past the timeouts, 431 for headers over 16 KiB), but only on a connection that
 * has not written anything yet; on a kept-alive one the answer could land inside another
 * response, so that one is just closed.
 */
export function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || socket.bytesWritten > 0) {
    socket.destroy()
    return
  }
  const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request'
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`)
}

export function bindError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  return error.code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is already in use; choose another with --port`) : error
}

/**
 * Whether `host:port` can be bound right now, checked by binding it and letting go: `serve` asks
 * before it opens the store, so a second server that cannot get its port never touches the store
 * (no lock taken, no snapshot written on its way out). Port 0 always can.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return
  const probe = createNetServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (e: NodeJS.ErrnoException) => reject(bindError(e, host, port)))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()))
  })
}
