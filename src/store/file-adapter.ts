/**
 * The embedded default: a lowdb JSON snapshot plus an append-only event log beside it.
 *
 *   .marginalia/store.json          snapshot (lowdb, atomic temp-file + rename): state at a rev
 *   .marginalia/store.events.jsonl  one event per line after that rev; O(1) per mutation
 *   .marginalia/store.json.lock     cross-process lock (proper-lockfile)
 *
 * A write: take the lock, read the log tail that other processes appended (their events, in rev
 * order, exactly once), let the store decide new events against that state, append them,
 * durably (the log is opened O_DSYNC), release. The snapshot is rewritten only when the log has grown as large as the
 * snapshot, so the amortised cost of a mutation does not grow with the store.
 *
 * Readers never need the lock: each process keeps its log file descriptor open and remembers
 * how far it read. A compaction replaces the log file; a reader drains the old file through
 * its descriptor (still readable after unlink) before switching to the new one, so no event is
 * ever skipped. A torn last line (a writer killed mid-append) is ignored by readers and cut off
 * by the next writer.
 */
import { accessSync, constants as fsc, fstatSync, promises as fsp, statSync, watch as fsWatch, type FSWatcher } from 'node:fs'
import path from 'node:path'
import { Low } from 'lowdb'
import { DataFile } from 'lowdb/node'
import lockfile from 'proper-lockfile'
import { syncLockFs } from './sync-fs.js'
import { StoreFileError } from './errors.js'
import { isStoreEvent, type StoreEvent } from './events.js'
import { ANNOTATION_STATUSES } from './model.js'
import type { Decision, LoadResult, Snapshot, StoreAdapter } from './persistence.js'

export const STORE_FORMAT = 'marginalia-store'
export const STORE_FORMAT_VERSION = 1
/** A lock not refreshed for this long belongs to a dead process (a live holder refreshes it every second). */
export const DEFAULT_LOCK_STALE_MS = 5_000
export const DEFAULT_STORE_FILE = path.join('.marginalia', 'store.json')

interface SnapshotFile extends Snapshot {
  format: typeof STORE_FORMAT
  version: number
  savedAt: string
}

/** The few file operations that tests replace to simulate a full or failing disk. */
export interface FileIo {
  write(handle: fsp.FileHandle, data: Buffer): Promise<void>
  writeSnapshot(low: Low<SnapshotFile | null>, data: SnapshotFile): Promise<void>
}

const defaultIo: FileIo = {
  async write(handle, data) {
    let written = 0
    while (written < data.length) {
      const { bytesWritten } = await handle.write(data, written, data.length - written, null)
      written += bytesWritten
    }
  },
  async writeSnapshot(low, data) {
    low.data = data
    await low.write()
  },
}

export interface FileAdapterOptions {
  /** Path of the snapshot file; the log and lock live beside it. */
  file: string
  /** A lock older than this is considered abandoned by a dead process (ms, ≥ 2000). */
  lockStaleMs?: number
  /** Give up waiting for the lock after this long (ms). */
  lockTimeoutMs?: number
  /** Compact once the log is at least this large and at least as large as the snapshot. */
  compactMinBytes?: number
  /** Use fs.watch for instant notice of other processes' writes (default true; the poll remains). */
  watchFiles?: boolean
  /** Where problems that do not fail a command go (a failed compaction, a failed watch). */
  onError?: (error: unknown) => void
  /** File operations, replaceable for fault injection. */
  io?: Partial<FileIo>
}

interface LogCursor {
  handle: fsp.FileHandle
  ino: number
  writable: boolean
  /** Bytes consumed: always just after a newline (or 0). */
  offset: number
  /** Complete lines consumed, for error messages. */
  lines: number
}

export class FileAdapter implements StoreAdapter {
  readonly location: string
  readonly logFile: string
  readonly lockFile: string
  private readonly dir: string
  private readonly low: Low<SnapshotFile | null>
  private readonly io: FileIo
  private readonly staleMs: number
  private readonly lockTimeoutMs: number
  private readonly compactMinBytes: number
  private readonly watchFiles: boolean
  private readonly onError: (error: unknown) => void
  private cursor: LogCursor | null = null
  /** Rev of the last event this process has seen (from the snapshot or the log). */
  private lastRev = 0
  private snapshotBytes = 0
  private snapshotExists = false
  private snapshotMtimeMs: number | null = null
  private watcher: FSWatcher | null = null
  /** The release of our last lock, still under way (see transact). */
  private releasing: Promise<void> = Promise.resolve()
  private onChange: (() => void) | null = null

  constructor(options: FileAdapterOptions) {
    this.location = path.resolve(options.file)
    this.dir = path.dirname(this.location)
    const base = path.basename(this.location).replace(/\.json$/i, '')
    this.logFile = path.join(this.dir, `${base}.events.jsonl`)
    this.lockFile = `${this.location}.lock`
    this.low = new Low<SnapshotFile | null>(new DataFile(this.location, { parse: JSON.parse, stringify: (d) => JSON.stringify(d) }), null)
    this.io = { ...defaultIo, ...options.io }
    this.staleMs = Math.max(2_000, options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS)
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000
    this.compactMinBytes = options.compactMinBytes ?? 4 * 1024 * 1024
    this.watchFiles = options.watchFiles ?? true
    this.onError = options.onError ?? ((e) => console.error(`marginalia: ${e instanceof Error ? e.message : String(e)}`))
  }

  async load(): Promise<LoadResult> {
    if (!(await exists(this.dir))) return { snapshot: null, events: [] }
    const release = await this.lock({ optional: true })
    try {
      const snapshot = await this.readSnapshot()
      this.lastRev = snapshot?.rev ?? 0
      const events = await this.readNew({ underLock: false })
      return { snapshot, events }
    } catch (e) {
      await this.cursor?.handle.close().catch(() => {})
      this.cursor = null
      throw e
    } finally {
      await release()
    }
  }

  async transact(decide: (external: StoreEvent[]) => Decision): Promise<void> {
    // Once the log is open the directory exists (a vanished one fails the lock below, clearly).
    if (!this.cursor) {
      await fsp.mkdir(this.dir, { recursive: true }).catch((e: unknown) => {
        throw new StoreFileError(this.location, `cannot create the directory ${this.dir}: ${describe(e)}`, { cause: e })
      })
    }
    const release = await this.lock({ optional: false })
    let failed = true
    try {
      // The writability check (one access call) runs beside the catch-up read.
      const writable = this.assertSnapshotWritable().then(
        () => undefined,
        (e: unknown) => e,
      )
      const external = await this.readNew({ underLock: true })
      const decision = decide(external)
      const notWritable = await writable
      if (decision.events.length > 0 && notWritable !== undefined) throw notWritable
      if (decision.events.length > 0 && !this.snapshotExists && this.lastRev === 0 && !this.cursor) {
        // A brand-new store: an empty snapshot first, so the log can start at rev 1 and stay.
        try {
          await this.io.writeSnapshot(this.low, { format: STORE_FORMAT, version: STORE_FORMAT_VERSION, savedAt: new Date().toISOString(), rev: 0, sessions: [], annotations: [], recentEvents: [] })
        } catch (e) {
          throw new StoreFileError(this.location, `could not be created (${describe(e)}); nothing was written`, { cause: e })
        }
        await this.noteSnapshot()
      }
      if (decision.events.length > 0) await this.append(decision.events)
      if (decision.events.length > 0 && this.shouldCompact()) await this.compactSafely(decision.snapshot)
      failed = false
    } finally {
      // The events are durable: the caller publishes them first, then the lock is let go (its
      // rmdir is a blocking syscall, see sync-fs.ts). The next lock (ours) waits for this
      // release; other processes see the lock free a moment later.
      this.releasing = new Promise<void>((resolve) => setImmediate(() => void release().then(resolve)))
      if (failed) await this.releasing
    }
    this.ensureWatching()
  }

  async poll(): Promise<StoreEvent[]> {
    this.ensureWatching()
    return this.readNew({ underLock: false })
  }

  watch(onChange: () => void): () => void {
    this.onChange = onChange
    this.ensureWatching()
    return () => {
      this.onChange = null
      this.watcher?.close()
      this.watcher = null
    }
  }

  async close(snapshot: () => Snapshot): Promise<void> {
    this.watcher?.close()
    this.watcher = null
    await this.releasing
    try {
      const cursor = this.cursor
      const worthIt = cursor !== null && cursor.writable && cursor.offset > 0 && (this.snapshotBytes < 4 * this.compactMinBytes || cursor.offset * 4 > this.snapshotBytes)
      if (worthIt) {
        const release = await this.lock({ optional: true })
        try {
          // Only if nobody wrote meanwhile: our state must be the whole truth for the snapshot.
          const { size } = await cursor.handle.stat()
          const current = statIno(this.logFile)
          if (size === cursor.offset && current === cursor.ino) await this.compactSafely(snapshot)
        } finally {
          await release()
        }
      }
    } finally {
      await this.cursor?.handle.close().catch(() => {})
      this.cursor = null
    }
  }

  async dispose(): Promise<void> {
    this.onChange = null
    this.watcher?.close()
    this.watcher = null
    await this.cursor?.handle.close().catch(() => {})
    this.cursor = null
  }

  // ---- snapshot -----------------------------------------------------------------------------

  private async readSnapshot(): Promise<Snapshot | null> {
    let raw: unknown
    try {
      const st = await fsp.stat(this.location)
      this.snapshotBytes = st.size
      this.snapshotExists = true
      this.snapshotMtimeMs = st.mtimeMs
      if (st.size === 0) throw new StoreFileError(this.location, `is empty, so it is not a usable store. ${UNTOUCHED}`)
      await this.low.read()
      raw = this.low.data
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      if (isErrno(e, 'ENOENT')) {
        this.snapshotExists = false
        return null
      }
      if (e instanceof SyntaxError) throw new StoreFileError(this.location, `is not valid JSON (${e.message}). ${UNTOUCHED}`, { cause: e })
      throw new StoreFileError(this.location, `cannot be read: ${describe(e)}`, { cause: e })
    }
    return this.checkSnapshot(raw)
  }

  private checkSnapshot(raw: unknown): Snapshot {
    const bad = (what: string): never => {
      throw new StoreFileError(this.location, `is not a Marginalia store file (${what}). ${UNTOUCHED}`)
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('expected a JSON object')
    const f = raw as Partial<SnapshotFile>
    if (f.format !== STORE_FORMAT) return bad(`"format" should be "${STORE_FORMAT}"`)
    if (typeof f.version !== 'number' || !Number.isInteger(f.version) || f.version < 1) return bad('"version" is missing')
    if (f.version > STORE_FORMAT_VERSION) {
      throw new StoreFileError(
        this.location,
        `was written by a newer Marginalia (store format version ${f.version}; this version reads up to ${STORE_FORMAT_VERSION}). Upgrade Marginalia to open it. ${UNTOUCHED}`,
      )
    }
    if (typeof f.rev !== 'number' || !Number.isInteger(f.rev) || f.rev < 0) return bad('"rev" must be an integer ≥ 0')
    if (!Array.isArray(f.sessions) || !Array.isArray(f.annotations) || !Array.isArray(f.recentEvents)) {
      return bad('"sessions", "annotations" and "recentEvents" must be arrays')
    }
    for (const s of f.sessions) if (!isRecord(s)) return bad('a session lacks an id')
    for (const a of f.annotations) {
      if (!isRecord(a) || typeof a.sessionId !== 'string' || !(ANNOTATION_STATUSES as readonly unknown[]).includes(a.status) || !Array.isArray(a.replies)) {
        return bad(`annotation ${isRecord(a) ? a.id : '?'} is malformed`)
      }
    }
    for (const e of f.recentEvents) if (!isStoreEvent(e)) return bad('an entry of "recentEvents" is not an event')
    return { rev: f.rev, sessions: f.sessions, annotations: f.annotations, recentEvents: f.recentEvents }
  }

  /**
   * A snapshot file without write permission is the owner saying "do not change this store".
   * The snapshot is replaced by rename, which the file's own mode does not prevent, and the log
   * beside it may still be writable: so refuse here, before anything is appended or replaced.
   */
  private async assertSnapshotWritable(): Promise<void> {
    if (!this.snapshotExists) return
    try {
      accessSync(this.location, fsc.W_OK)
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return
      throw new StoreFileError(this.location, `is read-only (${describe(e)}); nothing was written. ${UNTOUCHED}`, { cause: e })
    }
  }

  private shouldCompact(): boolean {
    const logBytes = this.cursor?.offset ?? 0
    return !this.snapshotExists || logBytes >= Math.max(this.compactMinBytes, this.snapshotBytes)
  }

  /** Write a snapshot, then start a new log. Under the lock. A failure here loses nothing. */
  private async compactSafely(snapshot: () => Snapshot): Promise<void> {
    try {
      await this.compact(snapshot())
    } catch (e) {
      this.onError(new StoreFileError(this.location, `could not save a snapshot (the event log still has everything): ${describe(e)}`, { cause: e }))
    }
  }

  private async compact(snap: Snapshot): Promise<void> {
    await this.assertSnapshotWritable()
    const data: SnapshotFile = { format: STORE_FORMAT, version: STORE_FORMAT_VERSION, savedAt: new Date().toISOString(), ...snap }
    await this.io.writeSnapshot(this.low, data)
    await this.noteSnapshot()
    // The snapshot covers every logged event: start a new log. Readers still holding the old
    // one drain it through their descriptor first.
    const old = this.cursor
    await fsp.unlink(this.logFile).catch((e: unknown) => {
      if (!isErrno(e, 'ENOENT')) throw e
    })
    this.cursor = null
    await old?.handle.close().catch(() => {})
    await this.openLog(true)
    await fsyncPath(this.dir)
  }

  private async noteSnapshot(): Promise<void> {
    await fsyncPath(this.location)
    const st = await fsp.stat(this.location)
    this.snapshotBytes = st.size
    this.snapshotExists = true
    this.snapshotMtimeMs = st.mtimeMs
  }

  // ---- log ----------------------------------------------------------------------------------

  private async openLog(create: boolean): Promise<LogCursor | null> {
    let handle: fsp.FileHandle
    let writable = true
    try {
      // O_DSYNC: a write returns once its data is durable, as write + fdatasync would, in one call.
      handle = await fsp.open(this.logFile, fsc.O_RDWR | fsc.O_APPEND | fsc.O_DSYNC | (create ? fsc.O_CREAT : 0))
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return null
      if (!isErrno(e, 'EACCES') && !isErrno(e, 'EPERM') && !isErrno(e, 'EROFS')) {
        throw new StoreFileError(this.logFile, `cannot be opened: ${describe(e)}`, { cause: e })
      }
      try {
        handle = await fsp.open(this.logFile, 'r')
        writable = false
      } catch (e2) {
        if (isErrno(e2, 'ENOENT')) return null
        throw new StoreFileError(this.logFile, `cannot be opened: ${describe(e2)}`, { cause: e2 })
      }
    }
    const { ino } = await handle.stat()
    this.cursor = { handle, ino, writable, offset: 0, lines: 0 }
    return this.cursor
  }

  /**
   * Events appended since we last looked, in rev order, each once. Follows a log replaced by
   * compaction. Under the lock it also cuts a torn last line left by a killed writer.
   */
  private async readNew({ underLock }: { underLock: boolean }): Promise<StoreEvent[]> {
    const out: StoreEvent[] = []
    const seen = { last: this.lastRev }
    if (!this.cursor) {
      const opened = await this.openLog(false)
      if (opened) await this.readFresh(opened, out, seen, underLock)
      else await this.catchUpFromSnapshot(out, seen)
    } else {
      // Observe a replacement *before* draining: once the path points elsewhere, the old file is final.
      const currentIno = statIno(this.logFile)
      const cursor = this.cursor
      await this.drain(cursor, out, seen, underLock, false)
      if (currentIno !== cursor.ino) {
        this.cursor = null
        await cursor.handle.close().catch(() => {})
        const next = currentIno === null ? null : await this.openLog(false)
        if (next) await this.readFresh(next, out, seen, underLock)
        else await this.catchUpFromSnapshot(out, seen)
      }
    }
    this.lastRev = seen.last
    return out
  }

  /**
   * A log we did not follow from its start may begin after events we never saw (another
   * process compacted meanwhile): take those from the snapshot's recent-event window.
   */
  private async readFresh(cursor: LogCursor, out: StoreEvent[], seen: { last: number }, underLock: boolean): Promise<void> {
    const fresh: StoreEvent[] = []
    const before = seen.last
    await this.drain(cursor, fresh, seen, underLock, true)
    if (fresh.length === 0) return this.catchUpFromSnapshot(out, seen)
    if (fresh[0]!.rev > before + 1) out.push(...(await this.eventsFromSnapshot(before, fresh[0]!.rev)))
    out.push(...fresh)
  }

  private async catchUpFromSnapshot(out: StoreEvent[], seen: { last: number }): Promise<void> {
    const mtime = await fsp.stat(this.location).then((st) => st.mtimeMs, () => null)
    if (mtime === null || mtime === this.snapshotMtimeMs) return
    const snapshot = await this.readSnapshot()
    if (!snapshot || snapshot.rev <= seen.last) return
    out.push(...(await this.eventsFromSnapshot(seen.last, snapshot.rev + 1, snapshot)))
    seen.last = snapshot.rev
  }

  /** Events after `after` and before `before`, from the snapshot's window; all of them or an error. */
  private async eventsFromSnapshot(after: number, before: number, known?: Snapshot): Promise<StoreEvent[]> {
    const snapshot = known ?? (await this.readSnapshot())
    const events = (snapshot?.recentEvents ?? []).filter((e) => e.rev > after && e.rev < before)
    if (events.length !== before - after - 1 || events.some((e, i) => e.rev !== after + 1 + i)) {
      throw new StoreFileError(
        this.location,
        `this process missed events ${after + 1}…${before - 1} and they are no longer kept (another process compacted the log). Restart it to reload the store.`,
      )
    }
    return events
  }

  private async drain(cursor: LogCursor, out: StoreEvent[], seen: { last: number }, underLock: boolean, fresh: boolean): Promise<void> {
    const CHUNK = 8 * 1024 * 1024
    let carry: Buffer = Buffer.alloc(0)
    let allowGap = fresh
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
      allowGap = this.parseLines(data.toString('utf8', 0, lastNl), cursor, out, seen, allowGap)
      cursor.offset += lastNl + 1
      carry = data.subarray(lastNl + 1)
    }
    if (carry.length > 0 && underLock && cursor.writable) {
      // Nobody else can be writing (we hold the lock): this is a torn line from a killed writer.
      await cursor.handle.truncate(cursor.offset)
    }
  }

  /** Parse complete lines; returns whether a gap before the next event is still acceptable. */
  private parseLines(text: string, cursor: LogCursor, out: StoreEvent[], seen: { last: number }, allowGap: boolean): boolean {
    for (const line of text.split('\n')) {
      cursor.lines++
      if (line.trim() === '') continue
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch (e) {
        throw new StoreFileError(this.logFile, `line ${cursor.lines} is not valid JSON (${describe(e)}). ${UNTOUCHED}`, { cause: e })
      }
      if (!isStoreEvent(event)) {
        throw new StoreFileError(this.logFile, `line ${cursor.lines} is not a valid Marginalia event (damaged, or written by a newer version?). ${UNTOUCHED}`)
      }
      if (event.rev <= seen.last) continue
      if (event.rev !== seen.last + 1 && !allowGap) {
        throw new StoreFileError(this.logFile, `line ${cursor.lines} has rev ${event.rev}, expected ${seen.last + 1}. ${UNTOUCHED}`)
      }
      allowGap = false
      out.push(event)
      seen.last = event.rev
    }
    return allowGap
  }

  private async append(events: StoreEvent[]): Promise<void> {
    const cursor = this.cursor ?? (await this.openLog(true))
    if (!cursor) throw new StoreFileError(this.logFile, 'cannot be created')
    if (!cursor.writable) throw new StoreFileError(this.logFile, `is read-only; nothing was written. ${UNTOUCHED}`)
    const data = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n')
    try {
      await this.io.write(cursor.handle, data) // durable on return (O_DSYNC)
    } catch (e) {
      // Leave no partial line behind: cut back to where this batch began.
      await cursor.handle.truncate(cursor.offset).catch(() => {})
      throw new StoreFileError(this.logFile, `could not write (${describe(e)}); nothing of this change was saved`, { cause: e })
    }
    cursor.offset += data.length
    cursor.lines += events.length
    this.lastRev = events[events.length - 1]!.rev
  }

  // ---- lock and watch -----------------------------------------------------------------------

  private async lock({ optional }: { optional: boolean }): Promise<() => Promise<void>> {
    await this.releasing
    const deadline = Date.now() + this.lockTimeoutMs
    let wait = 1
    for (;;) {
      try {
        const release = await lockfile.lock(this.location, {
          realpath: false,
          fs: syncLockFs,
          lockfilePath: this.lockFile,
          stale: this.staleMs,
          // A live holder refreshes the lock every second, so a stale lock (a killed writer) can be
          // taken over after a few seconds without risking a live writer's lock.
          update: 1_000,
          retries: 0,
          onCompromised: (e) => this.onError(new StoreFileError(this.lockFile, `lock was compromised: ${describe(e)}`)),
        })
        return async () => {
          await release().catch((e: unknown) => this.onError(e))
        }
      } catch (e) {
        if (optional && (isErrno(e, 'EACCES') || isErrno(e, 'EPERM') || isErrno(e, 'EROFS'))) return async () => {}
        if (!isErrno(e, 'ELOCKED')) throw new StoreFileError(this.lockFile, `cannot be created: ${describe(e)}`, { cause: e })
        if (Date.now() > deadline) {
          throw new StoreFileError(this.location, `is locked by another process for over ${this.lockTimeoutMs} ms (lock: ${this.lockFile})`)
        }
        await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random())))
        wait = Math.min(wait * 2, 4) // poll often: a writer that just released re-locks within a millisecond
      }
    }
  }

  private ensureWatching(): void {
    if (this.watcher || !this.onChange || !this.watchFiles) return
    try {
      const names = new Set([path.basename(this.logFile), path.basename(this.location)])
      this.watcher = fsWatch(this.dir, { persistent: false }, (_type, name) => {
        if (name === null || names.has(String(name))) this.onChange?.()
      })
      this.watcher.on('error', () => {
        this.watcher?.close()
        this.watcher = null
      })
    } catch {
      this.watcher = null // directory not there yet: the poll covers it and retries
    }
  }
}

const UNTOUCHED = 'The file was left untouched.'

function isRecord(value: unknown): value is Record<string, unknown> & { id: string } {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string'
}

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}

async function exists(p: string): Promise<boolean> {
  try {
    await fsp.stat(p)
    return true
  } catch {
    return false
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
  const st = statSync(p, { throwIfNoEntry: false })
  return st ? st.ino : null
}

async function fsyncPath(p: string): Promise<void> {
  let handle: fsp.FileHandle | undefined
  try {
    handle = await fsp.open(p, 'r')
    await handle.sync()
  } catch {
    // best effort (some file systems refuse fsync on directories)
  } finally {
    await handle?.close()
  }
}
