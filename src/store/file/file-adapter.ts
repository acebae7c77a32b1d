/**
 * The embedded default: a lowdb JSON snapshot plus an append-only event log beside it.
 *
 *   .marginalia/store.json          snapshot (snapshot-file.ts): state at a rev
 *   .marginalia/store.events.jsonl  one event per line after that rev (event-log.ts)
 *   .marginalia/store.json.lock     cross-process write lock (lock.ts)
 *   .marginalia/archive/            archived annotations (../archive/directory.ts)
 *   .marginalia/attachments/        attachment bytes (../blobs/file-blob-store.ts)
 *
 * None of them is used through a link: the folder is checked with lstat, each file is opened
 * with O_NOFOLLOW (O_EXCL when created), and a link in any of their places is refused with an
 * error naming it (no-follow.ts). A cloned repository can commit such links.
 *
 * A write: take the lock, read the log tail that other processes appended (their events, in
 * rev order, exactly once), let the store decide new events against that state, append them
 * durably, release. The snapshot is rewritten only when the log has grown as large as the
 * snapshot, so the amortised cost of a mutation does not grow with the store.
 *
 * Readers never need the lock. A reader that missed a whole log (another process compacted
 * before it looked) takes those events from the new snapshot's recent-event window.
 */
import { existsSync, lstatSync, statSync } from 'node:fs'
import path from 'node:path'
import type { StoreEvent } from '../events.js'
import { DEFAULT_POLL_INTERVAL_MS, snapshotOf, type Decision, type LoadResult, type RestoreInput, type Snapshot, type StoreAdapter, type StoreView } from '../persistence.js'
import { StoreFileError, UNTOUCHED, describe } from '../fs/errors.js'
import { defaultIo, type FileIo } from './io.js'
import { SnapshotFile } from './snapshot-file.js'
import { ensureDirectorySync, fsyncPath, realDirectorySync } from '../fs/no-follow.js'
import { EventLog } from './event-log.js'
import { FileLock } from './lock.js'
import { Watcher } from './watcher.js'
import { DirectoryArchive } from '../archive/directory.js'
import type { ArchiveSink } from '../archive.js'
import { FileBlobStore } from '../blobs/file-blob-store.js'
import type { BlobStore } from '../blobs/blob-store.js'


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
  /** Background check for changes made by other processes, in ms (default 500; 0 = off). */
  pollIntervalMs?: number
  /** Default directory for `store.archive()` (default: `archive/` beside the store file). */
  archiveDirectory?: string
  /** Where problems that do not fail a command go (a failed compaction, a compromised lock). */
  onError?: (error: unknown) => void
  /** File operations, replaceable for fault injection. */
  io?: Partial<FileIo>
}

export class FileAdapter implements StoreAdapter {
  readonly location: string
  readonly logFile: string
  readonly lockFile: string
  private readonly dir: string
  private readonly snapshot: SnapshotFile
  private readonly log: EventLog
  private readonly lock: FileLock
  private readonly watcher: Watcher
  private readonly compactMinBytes: number
  private readonly archiveDirectory: string
  private readonly onError: (error: unknown) => void
  /** Rev of the last event this process has seen (from the snapshot or the log). */
  private lastRev = 0
  /** Rev of the snapshot on disk as this process last read or wrote it. */
  private snapshotRev = 0
  /** mtime of a snapshot file found changed by hand and unusable: never overwritten (see `snapshotIsForeign`). */
  private foreignMtimeMs: number | undefined

  constructor(options: FileAdapterOptions) {
    this.location = path.resolve(options.file)
    this.dir = path.dirname(this.location)
    const base = path.basename(this.location).replace(/\.json$/i, '')
    this.logFile = path.join(this.dir, `${base}.events.jsonl`)
    this.lockFile = `${this.location}.lock`
    this.onError = options.onError ?? ((e) => console.error(`marginalia: ${describe(e)}`))
    const io = { ...defaultIo, ...options.io }
    this.snapshot = new SnapshotFile(this.location, io)
    this.log = new EventLog(this.logFile, io)
    this.lock = new FileLock({ target: this.location, lockFile: this.lockFile, staleMs: options.lockStaleMs, timeoutMs: options.lockTimeoutMs, onError: this.onError })
    this.watcher = new Watcher({ files: [this.logFile, this.location], watchFiles: options.watchFiles ?? true, pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS })
    this.compactMinBytes = options.compactMinBytes ?? 4 * 1024 * 1024
    this.archiveDirectory = options.archiveDirectory ?? path.join(this.dir, 'archive')
  }

  async load(): Promise<LoadResult> {
    checkStorePath(this.location)
    if (!realDirectorySync(this.dir)) return { snapshot: null, events: [] }
    const release = await this.lock.acquire({ optional: true })
    try {
      const snapshot = await this.snapshot.read()
      this.lastRev = snapshot?.rev ?? 0
      this.snapshotRev = this.lastRev
      const events = await this.readNew({ underLock: false })
      return { snapshot, events }
    } catch (e) {
      await this.log.close()
      throw e
    } finally {
      await release()
    }
  }

  async transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void> {
    // Once the log is open the directory exists (a vanished one fails the lock below, clearly).
    if (!this.log.isOpen || !existsSync(this.dir)) this.ensureDirectory()
    const release = await this.lock.acquire({ optional: false })
    let failed = true
    try {
      // The writability check (one access call) runs beside the catch-up read.
      const writable = this.snapshot.assertWritable().then(
        () => undefined,
        (e: unknown) => e,
      )
      const decision = await decide(await this.readNew({ underLock: true }))
      const notWritable = await writable
      if (decision.events.length > 0) {
        if (notWritable !== undefined) throw notWritable
        this.fence()
        if (this.logVanished()) await this.rewriteFromMemory(decision)
        else {
          await this.append(decision.events)
          if (this.shouldCompact()) await this.compactSafely(decision)
        }
      }
      failed = false
    } finally {
      // The events are durable: the caller publishes them first, then the lock is let go.
      const released = this.lock.releaseSoon(release)
      if (failed) await released
    }
    this.watcher.ensure()
  }

  async reload(): Promise<LoadResult> {
    await this.log.close()
    this.lastRev = 0
    this.snapshotRev = 0
    return this.load()
  }

  async poll(): Promise<StoreEvent[]> {
    this.watcher.ensure()
    return this.readNew({ underLock: false })
  }

  mayHaveNews(): boolean {
    return this.log.mayHaveNews() || this.snapshotReplaced()
  }

  /** Whether the snapshot path names another file than the one we read or wrote (sync stat). */
  private snapshotReplaced(): boolean {
    return !this.log.isOpen && existsSync(this.dir) && this.snapshot.replacedSinceReadSync()
  }

  watch(onChange: () => void): () => void {
    this.watcher.start(onChange)
    return () => this.watcher.stop()
  }

  async close(final: StoreView): Promise<void> {
    this.watcher.unwatch()
    await this.lock.settled()
    try {
      // Save a final snapshot when the log is worth folding in and nobody wrote meanwhile (our
      // state must be the whole truth for the snapshot).
      const worthIt = this.log.writable && this.log.bytes > 0 && (this.snapshot.bytes < 4 * this.compactMinBytes || this.log.bytes * 4 > this.snapshot.bytes)
      if (worthIt) {
        const release = await this.lock.acquire({ optional: true })
        try {
          if (await this.log.atEnd()) await this.compactSafely(final)
        } finally {
          await release()
        }
      }
    } finally {
      await this.log.close()
    }
  }

  async dispose(): Promise<void> {
    this.watcher.stop()
    await this.log.close()
  }

  archive(place: string | undefined): ArchiveSink {
    return new DirectoryArchive(place ?? this.archiveDirectory)
  }

  /** Attachments beside the store file: `.marginalia/attachments/<sha256>.<ext>`. */
  blobStore(): BlobStore {
    return new FileBlobStore(path.join(this.dir, 'attachments'))
  }

  /**
   * Import into a place with no store yet: the head state becomes the snapshot (the file store
   * keeps a snapshot plus the events after it, and the head snapshot's window keeps the recent
   * events for `changesSince`). One atomic rename, under the write lock; a store already there
   * (any rev above 0, or a non-empty log) is refused untouched.
   */
  async restore(input: RestoreInput): Promise<void> {
    checkStorePath(this.location)
    this.ensureDirectory()
    const release = await this.lock.acquire({ optional: false })
    try {
      const existing = await this.snapshot.read()
      const logBytes = lstatSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0
      if ((existing && existing.rev > 0) || logBytes > 0) {
        throw new StoreFileError(this.location, `already holds a store (rev ${Math.max(existing?.rev ?? 0, 1)} or later); import only into an empty store: pass another --store, or move this store's files aside first. ${UNTOUCHED}`)
      }
      await input.beforeWrite?.()
      await this.snapshot.write(input.head)
      await fsyncPath(this.dir)
      this.snapshotRev = input.head.rev
      this.lastRev = input.head.rev
    } finally {
      await release()
    }
  }

  /** The store's folder, made if missing; a link or a file in its place is refused. */
  private ensureDirectory(): void {
    try {
      ensureDirectorySync(this.dir)
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      throw new StoreFileError(this.location, `cannot create the directory ${this.dir}: ${describe(e)}`, { cause: e })
    }
  }

  // ---- catching up ----------------------------------------------------------------------------

  /** Events written since we last looked, in rev order, each once; follows a log replaced by compaction. */
  private async readNew({ underLock }: { underLock: boolean }): Promise<StoreEvent[]> {
    let events: StoreEvent[]
    if (!this.log.isOpen) events = await this.readFromStart(this.lastRev, underLock)
    else {
      const replaced = this.log.replaced()
      const tail = await this.log.read(this.lastRev, { underLock, fromStart: false })
      events = tail.events
      if (replaced) {
        await this.log.close()
        events.push(...(await this.readFromStart(tail.lastRev, underLock)))
      }
    }
    if (events.length > 0) this.lastRev = events[events.length - 1]!.rev
    return events
  }

  /**
   * Open the log at its path and read it whole. A log we did not follow from its start may
   * begin after events we never saw (another process compacted meanwhile): those come from the
   * snapshot's recent-event window, as does everything when there is no log at all.
   */
  private async readFromStart(after: number, underLock: boolean): Promise<StoreEvent[]> {
    if (!(await this.log.open(false))) return this.fromNewSnapshot(after)
    const { events } = await this.log.read(after, { underLock, fromStart: true })
    if (events.length === 0) return this.fromNewSnapshot(after)
    if (events[0]!.rev > after + 1) return [...(await this.fromWindow(after, events[0]!.rev)), ...events]
    return events
  }

  /** Events after `after` from the snapshot, if another process replaced it since we read it. */
  private async fromNewSnapshot(after: number): Promise<StoreEvent[]> {
    if (!(await this.snapshot.replacedSinceRead())) return []
    const snapshot = await this.snapshot.read()
    if (snapshot) this.snapshotRev = snapshot.rev
    if (!snapshot || snapshot.rev <= after) return []
    return this.fromWindow(after, snapshot.rev + 1, snapshot)
  }

  /** Events after `after` and before `before`, from the snapshot's window; all of them or an error. */
  private async fromWindow(after: number, before: number, known?: Snapshot): Promise<StoreEvent[]> {
    const snapshot = known ?? (await this.snapshot.read())
    const events = (snapshot?.recentEvents ?? []).filter((e) => e.rev > after && e.rev < before)
    if (events.length !== before - after - 1 || events.some((e, i) => e.rev !== after + 1 + i)) {
      if (!snapshot) {
        throw new StoreFileError(
          this.location,
          `is missing, and the event log beside it starts at rev ${before} (events ${after + 1}…${before - 1} are gone): the store's files were deleted or moved while a process used them. Restore the snapshot; or, to start an empty store, stop every Marginalia process that uses it and run marginalia reset --move-aside. ${UNTOUCHED}`,
        )
      }
      throw new StoreFileError(
        this.location,
        `this process missed events ${after + 1}…${before - 1} and they are no longer kept (another process compacted the log). Restart it to reload the store.`,
      )
    }
    return withHashes(events, snapshot)
  }

  // ---- writing --------------------------------------------------------------------------------

  private async append(events: StoreEvent[]): Promise<void> {
    if (events[0]!.rev !== this.lastRev + 1) {
      // The store decided from an older rev than the log holds (it refused an event it read):
      // appending would write a rev twice.
      throw new StoreFileError(this.location, `this process is at rev ${events[0]!.rev - 1} but the event log is at rev ${this.lastRev}; nothing of this change was written, so no rev is written twice`)
    }
    if (!this.snapshot.exists && this.lastRev === 0 && !this.log.isOpen) {
      // A brand-new store: an empty snapshot first, so the log can start at rev 1 and stay.
      try {
        await this.snapshot.write({ rev: 0, sessions: [], annotations: [], recentEvents: [] })
      } catch (e) {
        throw new StoreFileError(this.location, `could not be created (${describe(e)}); nothing was written`, { cause: e })
      }
    }
    await this.log.append(events)
    this.lastRev = events[events.length - 1]!.rev
  }

  /**
   * Fencing: append only while we still own the lock and the log is exactly where we last read
   * it. A process stalled between its decision and its append (SIGSTOP, suspend) may have lost
   * the lock to another host's age rule, or find revs it never read after its cursor: then it
   * writes nothing and fails the batch; its next write re-reads first. Never appends over
   * another writer's revs.
   */
  private fence(): void {
    if (this.lock.compromised) {
      throw new StoreFileError(
        this.location,
        'this process lost its write lock before it could write (it was stalled and another process took the lock over); nothing of this change was written. Try again: the next write re-reads the store first.',
      )
    }
    if (this.log.isOpen && !this.log.atEndSync()) {
      this.log.discardCursor()
      throw new StoreFileError(
        this.location,
        'the event log changed under this process while it held the write lock (another writer appended or replaced it); nothing of this change was written. Try again: the next write re-reads the store first.',
      )
    }
  }

  /**
   * Whether the log this process has been following is gone while it holds events beyond the
   * snapshot on disk: the store's files (or its directory) were deleted while we ran. Appending
   * to a new log would start it after revs nobody can read any more.
   */
  private logVanished(): boolean {
    if (this.lastRev === 0) return false
    if (this.snapshot.exists && !existsSync(this.location)) return true
    if (this.log.isOpen) return false
    return !this.snapshot.exists || this.snapshotRev < this.lastRev
  }

  /**
   * The store's files were deleted under this running process. It holds the whole state, so it
   * writes a complete snapshot (including this decision's events) and a fresh log: every
   * confirmed write survives, and a newly started process opens the store as usual.
   */
  private async rewriteFromMemory(decision: Decision): Promise<void> {
    try {
      this.ensureDirectory()
      await this.snapshot.write(snapshotOf(decision))
      await this.log.restart()
      await fsyncPath(this.dir)
    } catch (e) {
      throw new StoreFileError(this.location, `was deleted while this process ran, and could not be rewritten from memory (${describe(e)}); nothing of this change was written`, { cause: e })
    }
    this.snapshotRev = decision.state.rev
    this.lastRev = decision.state.rev
    this.onError(new StoreFileError(this.location, `was deleted while this process ran; rewrote it from memory at rev ${decision.state.rev}. To empty a store on purpose, run marginalia reset (safe while Marginalia runs)`))
  }

  private shouldCompact(): boolean {
    return !this.snapshot.exists || this.log.bytes >= Math.max(this.compactMinBytes, this.snapshot.bytes)
  }

  /**
   * Whether the snapshot on disk was replaced by something that is not a usable snapshot (a hand
   * edit) since this process last read or wrote it. Such a file was reported to other processes as
   * "left untouched", so this process must not overwrite it either: it keeps appending to the log
   * (which, with the old snapshot it read, has everything) and says so once.
   */
  private async snapshotIsForeign(): Promise<boolean> {
    const st = lstatSync(this.location, { throwIfNoEntry: false })
    if (st === undefined) return false
    if (this.foreignMtimeMs === st.mtimeMs) return true
    if (!this.snapshot.replacedSinceReadSync()) return false
    try {
      const theirs = await this.snapshot.read()
      if (theirs && theirs.rev <= this.lastRev) return false // another process compacted: a real snapshot
      if (!theirs) return false
    } catch (e) {
      this.foreignMtimeMs = st.mtimeMs
      this.onError(
        new StoreFileError(this.location, `was changed outside Marginalia and is not a usable snapshot (${e instanceof Error ? e.message : String(e)}). This process left it as it is and keeps writing to the event log; restore the file (or run marginalia reset --move-aside once every process is stopped)`),
      )
      return true
    }
    return false
  }

  /** Write a snapshot, then start a new log. Under the lock. A failure here loses nothing. */
  private async compactSafely(view: StoreView): Promise<void> {
    if (await this.snapshotIsForeign()) return
    try {
      await this.snapshot.assertWritable()
      await this.snapshot.write(snapshotOf(view))
      this.snapshotRev = view.state.rev
      // The snapshot covers every logged event: start a new log. Readers still holding the old
      // one drain it through their descriptor first.
      await this.log.restart()
      await fsyncPath(this.dir)
    } catch (e) {
      this.onError(new StoreFileError(this.location, `could not save a snapshot (the event log still has everything): ${describe(e)}`, { cause: e }))
    }
  }
}

/**
 * Refuse, at open, a store path that can never work, with a message naming the cause: a path in
 * a kernel file system (/proc, /sys, /dev), or one whose parent is a file. Otherwise the first
 * write would fail much later, after the server had started.
 */
function checkStorePath(file: string): void {
  const resolved = path.resolve(file)
  if (/^\/(proc|sys|dev)(\/|$)/.test(resolved)) {
    throw new StoreFileError(resolved, 'is inside a kernel file system (/proc, /sys or /dev), where no store can live; choose a path in a project directory (--store FILE)')
  }
  for (let dir = path.dirname(resolved); ; dir = path.dirname(dir)) {
    let st: ReturnType<typeof statSync>
    try {
      st = statSync(dir, { throwIfNoEntry: false })
    } catch {
      st = undefined // ENOTDIR: a parent further up is a file; keep walking up to name it
    }
    if (st) {
      if (!st.isDirectory()) throw new StoreFileError(resolved, `cannot be created: ${dir} is a file, not a directory; choose another --store path or move that file`)
      return
    }
    if (path.dirname(dir) === dir) return
  }
}

/**
 * The snapshot's window holds public copies of events (a `credential.issued` without its hash, as
 * SSE and `changes$` hand them out), and a credential without a hash never works. The snapshot's
 * `credentials` keeps the hashes of every credential still in use at its rev: put each back. One
 * missing there was ended before that rev, by an event in the same window.
 */
function withHashes(events: StoreEvent[], snapshot: Snapshot | null): StoreEvent[] {
  const kept = new Map((snapshot?.credentials ?? []).map((c) => [c.id, c]))
  return events.map((e) => {
    if (e.type !== 'credential.issued' || 'hash' in e.credential) return e
    const full = kept.get(e.credential.id)
    return full ? { ...e, credential: full } : e
  })
}
