/**
 * The port of a project's own Marginalia server, when nothing names one: the port recorded in the
 * project's `.marginalia/port` (the one its dev server last served on), else one derived from the
 * project's path — stable for the project, and different for another project, so two projects on
 * one machine never meet on one port. The range leaves out 4848, `marginalia serve`'s default.
 * The recorded file is the person's (and anything's) to write: it is read as untrusted input — a
 * regular file of a few bytes holding one port number, or it is ignored.
 */
import { createHash } from 'node:crypto'
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** The project ports: `FIRST_PROJECT_PORT` and the `PROJECT_PORTS - 1` after it. */
export const FIRST_PROJECT_PORT = 4849
export const PROJECT_PORTS = 1000
/** How many ports after its own a project tries when its own is taken by something else. */
const TRIES = 20
const DIR = '.marginalia'
const FILE = 'port'

/** The port derived from the project's path (absolute, as given: the same folder gives the same port). */
export function derivedPort(root: string): number {
  const hash = createHash('sha256').update(path.resolve(root)).digest()
  return FIRST_PROJECT_PORT + (hash.readUInt32BE(0) % PROJECT_PORTS)
}

/** Where the project records its port. */
function portFile(root: string): string {
  return path.join(root, DIR, FILE)
}

/** A port number in text, 1024 to 65535 (a privileged or out-of-range one is no project's port). */
export function parsePort(text: string): number | undefined {
  const t = text.trim()
  if (!/^\d{1,5}$/.test(t)) return undefined
  const n = Number(t)
  return n >= 1024 && n <= 65_535 ? n : undefined
}

/** The port in `.marginalia/port`, when that is a small regular file (never followed through a link) holding one. */
export function recordedPort(root: string): number | undefined {
  let fd: number | undefined
  try {
    fd = openSync(portFile(root), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.size > 16) return undefined
    const buf = Buffer.alloc(16)
    const n = readSync(fd, buf, 0, 16, 0)
    return parsePort(buf.subarray(0, n).toString('latin1'))
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Record `port` as the project's (atomically; a failure only means the next start derives it again). */
export function recordPort(root: string, port: number): void {
  if (recordedPort(root) === port) return
  try {
    mkdirSync(path.join(root, DIR), { recursive: true })
    const tmp = `${portFile(root)}.${process.pid}.tmp`
    writeFileSync(tmp, `${port}\n`, { flag: 'wx' })
    renameSync(tmp, portFile(root))
  } catch {
    // read-only project, a link in the way: nothing is lost, the port is derived again next time
  }
}

/** The project's port: recorded, else derived. */
export function projectPort(root: string): number {
  return recordedPort(root) ?? derivedPort(root)
}

/** The ports a project tries in order: its own, then the next ones in the range (wrapping). */
export function candidatePorts(root: string): number[] {
  const first = projectPort(root)
  const out = [first]
  const derived = derivedPort(root)
  if (derived !== first) out.push(derived)
  for (let i = 1; out.length < TRIES; i++) {
    const p = FIRST_PROJECT_PORT + ((derived - FIRST_PROJECT_PORT + i) % PROJECT_PORTS)
    if (!out.includes(p)) out.push(p)
  }
  return out
}

/** The project's name as people know it: its folder's name. */
export function projectName(root: string): string {
  return path.basename(path.resolve(root))
}
