/**
 * The append-only event log (`store.events.jsonl`): one event per line after the snapshot's
 * rev, appended durably (the file is opened O_DSYNC), O(1) per mutation.
 *
 * Each process keeps the log's descriptor open and remembers how far it read. A compaction
 * replaces the file; a reader drains the old file through its descriptor (still readable after
 * unlink) before it opens the new one, so no event is skipped. A torn last line (a writer killed
 * mid-append) is ignored by readers and cut off by the next writer, under the lock.
 *
 * The log is never opened through a link, and is created only with O_EXCL (see no-follow.ts): a
 * link in its place is refused, not created through, appended to or replaced.
 */
import { constants as fsc, fstatSync, lstatSync, promises as fsp } from 'node:fs'
import { isStoreEvent, type StoreEvent } from '../events.js'
import type { FileIo } from './io.js'
import { StoreFileError, UNTOUCHED, describe, isErrno } from '../fs/errors.js'
import { openNoFollow, regularFileSync } from '../fs/no-follow.js'

/** What one read found: the new events, in rev order, and the rev of the last one seen. */
export interface LogRead {
  events: StoreEvent[]
  lastRev: number
}

interface Cursor {
  handle: fsp.FileHandle
  ino: number
  writable: boolean
  /** Bytes consumed: always just after a newline (or 0). */
  offset: number
  /** Complete lines consumed, for error messages. */
  lines: number
}

const CHUNK = 8 * 1024 * 1024
/** Whether this platform has O_DSYNC (not Windows); without it each append calls fdatasync. */
const HAS_O_DSYNC = typeof fsc.O_DSYNC === 'number' && fsc.O_DSYNC !== 0

export class EventLog {
  private cursor: Cursor | null = null

  constructor(
    readonly path: string,
    private readonly io: FileIo,
  ) {}

  /** Whether this process has the log open. */
  get isOpen(): boolean {
    return this.cursor !== null
  }

  /** Bytes of the open log read or written so far (0 when none is open). */
  get bytes(): number {
    return this.cursor?.offset ?? 0
  }

  /** Whether the open log can take appends (false: read-only, or none open). */
  get writable(): boolean {
    return this.cursor?.writable ?? false
  }

  /**
   * Open the log at its path (creating it if `create`), read-only where it cannot be written.
   * Returns false when there is no log.
   */
  async open(create: boolean): Promise<boolean> {
    let handle: fsp.FileHandle
    let writable = true
    let exists: boolean
    try {
      // A link or special file in the log's place is refused here (a StoreFileError naming it).
      exists = regularFileSync(this.path) !== undefined
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      throw new StoreFileError(this.path, `cannot be opened: ${describe(e)}`, { cause: e })
    }
    if (!exists && !create) return false
    try {
      // O_DSYNC: a write returns once its data is durable, as write + fdatasync would, in one call.
      handle = await openNoFollow(this.path, fsc.O_RDWR | fsc.O_APPEND | (HAS_O_DSYNC ? fsc.O_DSYNC : 0), { create: !exists })
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      if (isErrno(e, 'ENOENT')) return false
      if (!isErrno(e, 'EACCES') && !isErrno(e, 'EPERM') && !isErrno(e, 'EROFS')) {
        throw new StoreFileError(this.path, `cannot be opened: ${describe(e)}`, { cause: e })
      }
      try {
        handle = await openNoFollow(this.path, fsc.O_RDONLY)
        writable = false
      } catch (e2) {
        if (e2 instanceof StoreFileError) throw e2
        if (isErrno(e2, 'ENOENT')) return false
        throw new StoreFileError(this.path, `cannot be opened: ${describe(e2)}`, { cause: e2 })
      }
    }
    const { ino } = await handle.stat()
    this.cursor = { handle, ino, writable, offset: 0, lines: 0 }
    return true
  }

  /**
   * Whether the path no longer names the file we have open (a compaction replaced or removed
   * it). Check this *before* draining: once the path points elsewhere, the old file is final.
   */
  replaced(): boolean {
    return this.cursor !== null && statIno(this.path) !== this.cursor.ino
  }

  /** Whether we have read every byte of the file at the path (nobody appended since). */
  async atEnd(): Promise<boolean> {
    const cursor = this.cursor
    if (!cursor) return false
    const { size } = await cursor.handle.stat()
    return size === cursor.offset && statIno(this.path) === cursor.ino
  }

  /** `atEnd` in one fstat and one stat, for the fence right before an append (under the lock). */
  atEndSync(): boolean {
    const cursor = this.cursor
    if (!cursor) return false
    return fstatSync(cursor.handle.fd).size === cursor.offset && statIno(this.path) === cursor.ino
  }

  /**
   * Whether the log may hold events we have not read: it grew, or its path names another file
   * (or none). A few microseconds. With no log open: whether one exists now.
   */
  mayHaveNews(): boolean {
    const cursor = this.cursor
    if (!cursor) return statIno(this.path) !== null
    return fstatSync(cursor.handle.fd).size !== cursor.offset || statIno(this.path) !== cursor.ino
  }

  /**
   * Forget where we were in the open log (it changed under us): the next read opens the log at
   * its path afresh and skips what we have already seen by rev.
   */
  discardCursor(): void {
    void this.close()
  }

  /**
   * The complete events after rev `after` that we have not read yet, each once, in rev order.
   * `fromStart`: the log was opened now, so it may begin after `after + 1` (another process
   * compacted meanwhile; the caller fills the gap from the snapshot). Under the lock it also
   * cuts a torn last line left by a killed writer.
   */
  async read(after: number, { underLock, fromStart }: { underLock: boolean; fromStart: boolean }): Promise<LogRead> {
    const cursor = this.cursor
    const read: LogRead = { events: [], lastRev: after }
    if (!cursor) return read
    let carry: Buffer = Buffer.alloc(0)
    for (;;) {
      const { size } = fstatSync(cursor.handle.fd) // see statIno: metadata calls are synchronous
      const start = cursor.offset + carry.length
      if (size <= start) break
      const length = Math.min(CHUNK, size - start)
      const chunk = Buffer.allocUnsafe(length)
      const { bytesRead } = await cursor.handle.read(chunk, 0, length, start)
      if (bytesRead === 0) break
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead)
      // Split on the newline byte: it never occurs inside a multi-byte UTF-8 sequence.
      const lastNl = data.lastIndexOf(10)
      if (lastNl < 0) {
        carry = data
        continue
      }
      this.parse(data.toString('utf8', 0, lastNl), read, fromStart)
      cursor.offset += lastNl + 1
      carry = data.subarray(lastNl + 1)
    }
    if (carry.length > 0 && underLock && cursor.writable) {
      // Nobody else can be writing (we hold the lock): this is a torn line from a killed writer.
      await cursor.handle.truncate(cursor.offset)
    }
    return read
  }

  /** Append events durably (on return), creating the log if needed. All or nothing. */
  async append(events: StoreEvent[]): Promise<void> {
    if (!this.cursor && !(await this.open(true))) throw new StoreFileError(this.path, 'cannot be created')
    const cursor = this.cursor!
    if (!cursor.writable) throw new StoreFileError(this.path, `is read-only; nothing was written. ${UNTOUCHED}`)
    const data = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n')
    try {
      await this.io.write(cursor.handle, data) // durable on return (O_DSYNC)
      if (!HAS_O_DSYNC) await cursor.handle.datasync() // platforms without O_DSYNC (Windows): durable when resolved all the same
    } catch (e) {
      // Leave no partial line behind: cut back to where this batch began.
      await cursor.handle.truncate(cursor.offset).catch(() => {})
      throw new StoreFileError(this.path, `could not write (${describe(e)}); nothing of this change was saved`, { cause: e })
    }
    cursor.offset += data.length
    cursor.lines += events.length
  }

  /** Start an empty log in place of this one (a snapshot now covers every logged event). */
  async restart(): Promise<void> {
    regularFileSync(this.path) // a link put in its place is refused, not silently replaced
    await fsp.unlink(this.path).catch((e: unknown) => {
      if (!isErrno(e, 'ENOENT')) throw e
    })
    await this.close()
    await this.open(true)
  }

  async close(): Promise<void> {
    const cursor = this.cursor
    this.cursor = null
    await cursor?.handle.close().catch(() => {})
  }

  /** Parse complete lines into `read`. A gap before the first event is allowed only `fromStart`. */
  private parse(text: string, read: LogRead, fromStart: boolean): void {
    const cursor = this.cursor!
    for (const line of text.split('\n')) {
      cursor.lines++
      if (line.trim() === '') continue
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch (e) {
        throw new StoreFileError(this.path, `line ${cursor.lines} is not valid JSON (${describe(e)}). ${UNTOUCHED}`, { cause: e })
      }
      if (!isStoreEvent(event)) {
        throw new StoreFileError(this.path, `line ${cursor.lines} is not a valid Marginalia event (damaged, or written by a newer version?). ${UNTOUCHED}`)
      }
      if (event.rev <= read.lastRev) continue
      const gapAllowed = fromStart && read.events.length === 0
      if (event.rev !== read.lastRev + 1 && !gapAllowed) {
        throw new StoreFileError(this.path, `line ${cursor.lines} has rev ${event.rev}, expected ${read.lastRev + 1}. ${UNTOUCHED}`)
      }
      read.events.push(event)
      read.lastRev = event.rev
    }
  }
}

/**
 * Synchronous on purpose, like the other metadata calls on the write path (stat, fstat, access,
 * and the lock's mkdir/rmdir — see sync-fs.ts): each is a few microseconds of syscall, while its
 * async form is a round trip through libuv's thread pool (~0.1–0.3 ms each on a 2-vCPU VM,
 * measured with --cpu-prof), and a write took six of them in a row. Data reads and writes stay
 * asynchronous.
 */
function statIno(p: string): number | null {
  const st = lstatSync(p, { throwIfNoEntry: false })
  return st ? st.ino : null
}
