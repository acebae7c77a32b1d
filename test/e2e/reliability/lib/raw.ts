/**
 * Raw TCP exchanges with an HTTP server, for requests node:http would refuse to send (huge or
 * missing headers, partial requests, garbage) and for clients that never read.
 */
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'

export interface RawOutcome {
  /** The status code of the first response line, if any arrived. */
  status?: number
  /** Everything the server sent (at most the first 64 KiB). */
  text: string
  /** The server closed the connection (ms after connecting); undefined when it stayed open. */
  closedAfterMs?: number
}

export interface RawStep {
  /** Wait this long before writing (ms). */
  delayMs: number
  data: string | Buffer
}

/**
 * Connect, write `steps` (stopping once the server answered or closed), and wait for the
 * server to close the connection — at most `waitMs`, after which it is cut and reported open.
 */
export function rawExchange(port: number, steps: readonly RawStep[] | string | Buffer, waitMs = 5_000): Promise<RawOutcome> {
  const list: readonly RawStep[] = typeof steps === 'string' || Buffer.isBuffer(steps) ? [{ delayMs: 0, data: steps }] : steps
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let started = 0
    let closed = false
    const timers: ReturnType<typeof setTimeout>[] = []
    const finish = (closedAfterMs?: number): void => {
      for (const t of timers) clearTimeout(t)
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      resolve({ ...(m ? { status: Number(m[1]) } : {}), text, ...(closedAfterMs !== undefined ? { closedAfterMs } : {}) })
    }
    socket.on('data', (d: Buffer) => {
      if (text.length < 65_536) text += d.toString('latin1')
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      closed = true
      finish(Date.now() - started)
    })
    const send = async (): Promise<void> => {
      started = Date.now()
      for (const step of list) {
        if (step.delayMs > 0) await new Promise((r) => timers.push(setTimeout(r, step.delayMs)))
        if (closed || text.length > 0) break
        socket.write(step.data)
      }
    }
    socket.on('connect', () => void send())
    timers.push(
      setTimeout(() => {
        if (closed) return
        socket.removeAllListeners('close')
        socket.destroy()
        finish()
      }, waitMs),
    )
  })
}

/** A client that sends a request and then never reads a byte of the answer. */
export async function stalledClient(port: number, request: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.pause()
  socket.write(request)
  return socket
}

/**
 * How many times a listen queue on this machine overflowed (SYNs dropped because the server's
 * accept backlog was full), from /proc/net/netstat; undefined where that is not available.
 */
export function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'))
    const names = lines[0]!.split(/\s+/)
    const values = lines[1]!.split(/\s+/)
    const at = names.indexOf('ListenOverflows')
    return at < 0 ? undefined : Number(values[at])
  } catch {
    return undefined
  }
}
