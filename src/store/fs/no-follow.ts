/**
 * Files and folders under the store's folder, used without following links. A repository can
 * commit `.marginalia/store.events.jsonl -> ../../.bash_profile`: opening that with O_CREAT would
 * create the user's shell profile and append events (with page titles) to it. So every file there
 * is opened with O_NOFOLLOW (and O_EXCL when created), checked with fstat to be a regular file, and
 * each folder is checked with lstat to be a real directory. Anything else is refused with a
 * StoreFileError naming the path, what it is, and what to do; it is never replaced, created
 * through, or removed.
 *
 * Only the last component is checked: the folders above the store are the user's own.
 */
import { closeSync, constants as fsc, fstatSync, lstatSync, mkdirSync, openSync, promises as fsp, readlinkSync, readSync, type Stats } from 'node:fs'
import path from 'node:path'
import { StoreFileError, UNTOUCHED, isErrno } from './errors.js'

/** O_NOFOLLOW where the platform has it (not Windows, where links need privileges to create). */
const O_NOFOLLOW = fsc.O_NOFOLLOW ?? 0
/** Opening a FIFO for reading would block until a writer comes: never wait, the fstat refuses it. */
const O_NONBLOCK = fsc.O_NONBLOCK ?? 0

/** What is at `p`, in words: "a symbolic link to ../x", "a directory", "a FIFO (named pipe)" … */
function kindOf(p: string, st: Stats): string {
  if (st.isSymbolicLink()) {
    let target = '?'
    try {
      target = readlinkSync(p)
    } catch {
      // gone meanwhile
    }
    return `a symbolic link to ${target}`
  }
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isFile()) return 'a regular file'
  return 'not a regular file'
}

/** The refusal of `p` (found to be `st`) where the store expects a regular file or a folder. */
export function refusal(p: string, st: Stats, expected: 'file' | 'folder'): StoreFileError {
  const link = st.isSymbolicLink()
  return new StoreFileError(
    p,
    `is ${kindOf(p, st)}, not a ${expected === 'file' ? 'regular file' : 'folder'}; Marginalia never reads or writes through links or special files in its store. ` +
      `Remove it (a cloned repository may have planted it)${link ? '; if you made this link yourself, pass --store with the real path instead' : ''}. ${UNTOUCHED}`,
  )
}

function lstatOrUndefined(p: string): Stats | undefined {
  return lstatSync(p, { throwIfNoEntry: false })
}

/** The file's lstat, or undefined when there is none; a StoreFileError when it is not a regular file. */
export function regularFileSync(file: string): Stats | undefined {
  const st = lstatOrUndefined(file)
  if (st && !st.isFile()) throw refusal(file, st, 'file')
  return st
}

/** Whether the folder exists; a StoreFileError when it is a link or anything but a directory. */
export function realDirectorySync(dir: string): boolean {
  const st = lstatOrUndefined(dir)
  if (st && !st.isDirectory()) throw refusal(dir, st, 'folder')
  return st !== undefined
}

/** Make the folder if it is not there (the folders above it as usual); refuse a link or a file in its place. */
export function ensureDirectorySync(dir: string): void {
  if (realDirectorySync(dir)) return
  mkdirSync(path.dirname(dir), { recursive: true })
  try {
    mkdirSync(dir)
  } catch (e) {
    if (!isErrno(e, 'EEXIST')) throw e
  }
  realDirectorySync(dir) // something else took the name meanwhile
}

/** The refusal for an open that failed because the path is a link (ELOOP; EMLINK on BSDs), else the error itself. */
function asLinkRefusal(file: string, e: unknown): unknown {
  if (!isErrno(e, 'ELOOP') && !isErrno(e, 'EMLINK') && !isErrno(e, 'EEXIST')) return e
  const st = lstatOrUndefined(file)
  return st && !st.isFile() ? refusal(file, st, 'file') : e
}

/**
 * Open a file of the store without following a link: `flags` plus O_NOFOLLOW. With `create`, a
 * missing file is created with O_EXCL (a dangling link in its place is EEXIST, never created
 * through). The open file is fstat-ed: anything but a regular file is closed and refused.
 * ENOENT (no file, and not `create`) is left to the caller.
 */
export async function openNoFollow(file: string, flags: number, { create = false }: { create?: boolean } = {}): Promise<fsp.FileHandle> {
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(file, flags | O_NOFOLLOW | O_NONBLOCK | (create ? fsc.O_CREAT | fsc.O_EXCL : 0), 0o666)
  } catch (e) {
    // Created by another process meanwhile: open what is there now (still not through a link).
    if (create && isErrno(e, 'EEXIST') && regularFileSync(file)) return openNoFollow(file, flags)
    throw asLinkRefusal(file, e)
  }
  const st = await handle.stat()
  if (!st.isFile()) {
    await handle.close()
    throw refusal(file, st, 'file')
  }
  return handle
}

/** `openNoFollow`, synchronously; returns the descriptor. */
export function openNoFollowSync(file: string, flags: number, { create = false }: { create?: boolean } = {}): number {
  let fd: number
  try {
    fd = openSync(file, flags | O_NOFOLLOW | O_NONBLOCK | (create ? fsc.O_CREAT | fsc.O_EXCL : 0), 0o666)
  } catch (e) {
    if (create && isErrno(e, 'EEXIST') && regularFileSync(file)) return openNoFollowSync(file, flags)
    throw asLinkRefusal(file, e)
  }
  const st = fstatSync(fd)
  if (!st.isFile()) {
    closeSync(fd)
    throw refusal(file, st, 'file')
  }
  return fd
}

/** A regular file's bytes (undefined when there is none), never through a link; at most `maxBytes`. */
export async function readNoFollow(file: string, maxBytes = Infinity): Promise<Buffer | undefined> {
  let handle: fsp.FileHandle
  try {
    handle = await openNoFollow(file, fsc.O_RDONLY)
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined
    throw e
  }
  try {
    const { size } = await handle.stat()
    if (size > maxBytes) throw new StoreFileError(file, `is ${size} bytes, more than the ${maxBytes} bytes such a file can hold; it was not read. ${UNTOUCHED}`)
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

/** `readNoFollow`, synchronously; a file over `maxBytes` is refused (an Error naming it). */
export function readNoFollowSync(file: string, maxBytes = Infinity): Buffer | undefined {
  let fd: number
  try {
    fd = openNoFollowSync(file, fsc.O_RDONLY)
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined
    throw e
  }
  try {
    const size = fstatSync(fd).size
    if (size > maxBytes) throw new Error(`${file} is ${size} bytes, over the ${maxBytes} this file may hold`)
    const out = Buffer.allocUnsafe(size)
    let at = 0
    while (at < size) {
      const n = readSync(fd, out, at, size - at, at)
      if (n === 0) break
      at += n
    }
    return out.subarray(0, at)
  } finally {
    closeSync(fd)
  }
}

/**
 * Replace `final` with `data` atomically and durably: a new temporary file beside it (O_EXCL,
 * O_NOFOLLOW, a name no one can plant in advance unless given), fsynced, renamed into place. A
 * link or special file at `final` is refused first, so it is never silently replaced.
 */
export async function replaceFile(final: string, data: Uint8Array | string, temp = `${path.join(path.dirname(final), `.${path.basename(final)}`)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`): Promise<void> {
  regularFileSync(final)
  const handle = await openNoFollow(temp, fsc.O_WRONLY, { create: true })
  try {
    try {
      await handle.writeFile(data)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fsp.rename(temp, final)
  } catch (e) {
    await fsp.unlink(temp).catch(() => {})
    throw e
  }
}

/** fsync a file or folder by path, never through a link; best effort (some file systems refuse fsync on folders). */
export async function fsyncPath(p: string): Promise<void> {
  let handle: fsp.FileHandle | undefined
  try {
    handle = await fsp.open(p, fsc.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    await handle.sync()
  } catch {
    // best effort
  } finally {
    await handle?.close()
  }
}
