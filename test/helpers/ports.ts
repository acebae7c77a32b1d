import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** How many ports below the OS's own range the tests pick from. */
const SPAN = 12_000

/**
 * The first port the OS hands out by itself (to `listen(0)` and to the local end of every
 * outgoing connection): Linux's ip_local_port_range; undefined where that cannot be read.
 */
function firstEphemeralPort(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > 10_000 ? low : undefined
  } catch {
    return undefined
  }
}

const FIRST_EPHEMERAL = firstEphemeralPort()
/** Ports this process handed out: never twice. */
const given = new Set<number>()

/** Whether `port` can be bound on 127.0.0.1 right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A port the OS picks (within its own range). */
function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * A port nothing listens on right now on 127.0.0.1, for a server a test starts (often a child
 * process that binds it seconds later). On Linux it is picked at random below the OS's own range:
 * a port from that range could meanwhile become another test's `listen(0)` server or the local end
 * of any outgoing connection (the browser's, a database client's), and the server would then fail
 * to start. Two test processes picking one port in the same seconds is about one in ten thousand.
 */
export async function freePort(): Promise<number> {
  if (FIRST_EPHEMERAL === undefined) return osPort()
  const first = Math.max(10_000, FIRST_EPHEMERAL - SPAN)
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (FIRST_EPHEMERAL - first))
    if (given.has(port) || !(await bindable(port))) continue
    given.add(port)
    return port
  }
  return osPort()
}
