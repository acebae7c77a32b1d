/**
 * The cross-process write lock beside the store file (`store.json.lock`, proper-lockfile's
 * directory lock). One writer at a time takes it for a transaction; readers never need it.
 *
 * The holder records itself in the lock (`owner.json`: pid, host, process start time). A waiting
 * process takes the lock over at once when its holder is provably dead on this host (the pid is
 * gone, or now names a process that started at another time), and never from a live process on
 * this host, however long it holds the lock (a stopped or suspended `serve` keeps it): the waiter
 * gives up after a bounded wait with STORE_BUSY naming the holder. A holder on another host (a
 * network disk) cannot be checked: there the age rule stays — a lock not refreshed for `staleMs`
 * is taken over — best effort, with the log fencing in file-adapter.ts as the safety net.
 *
 * The lock is a directory created under a fresh name and renamed into place; a link or a file in
 * its place (a repository can commit one) is refused before each attempt, naming it.
 */
import { hostname } from 'node:os'
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { syncLockFs } from './sync-fs.js'
import { StoreFileError, describe, isErrno } from '../fs/errors.js'
import { readNoFollowSync, realDirectorySync } from '../fs/no-follow.js'
import { StoreBusyError, type LockHolder } from '../errors.js'

/** A lock of another host not refreshed for this long belongs to a dead process (a live holder refreshes it every second). */
const DEFAULT_LOCK_STALE_MS = 5_000
/** How long a writer waits for a live holder before answering STORE_BUSY. */
const DEFAULT_LOCK_WAIT_MS = 2_000
/** proper-lockfile's own age rule, effectively off: this module decides takeovers itself. */
const NEVER_STALE_MS = 2 ** 30
const OWNER_FILE = 'owner.json'

export type Release = () => Promise<void>

export interface FileLockOptions {
  /** The store file the lock guards (named in messages). */
  target: string
  lockFile: string
  /** A lock of a holder on another host, not refreshed for this long, is taken over (ms, ≥ 2000). */
  staleMs?: number
  /** Give up waiting for a live holder after this long (ms): STORE_BUSY. */
  timeoutMs?: number
  /** Where a compromised lock is reported. */
  onError: (error: unknown) => void
}

/** This process, as it records itself in the lock. */
const SELF: Required<Pick<LockHolder, 'pid' | 'host'>> & LockHolder = { pid: process.pid, host: hostname(), ...startedOf(process.pid) }

export class FileLock {
  readonly file: string
  private readonly target: string
  private readonly staleMs: number
  /** proper-lockfile's file system, whose mkdir creates the lock with its owner record inside. */
  private readonly fs: typeof syncLockFs
  private readonly timeoutMs: number
  private readonly onError: (error: unknown) => void
  /** The release of our last lock, still under way (see `releaseSoon`). */
  private releasing: Promise<void> = Promise.resolve()
  /** Set when proper-lockfile reports our lock compromised (taken over, removed): the holder must re-read before writing. */
  private lost = false

  constructor(options: FileLockOptions) {
    this.target = options.target
    this.file = options.lockFile
    this.staleMs = Math.max(2_000, options.staleMs ?? DEFAULT_LOCK_STALE_MS)
    this.fs = recordingLockFs(() => JSON.stringify({ ...SELF, since: new Date().toISOString() }))
    this.timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_WAIT_MS
    this.onError = options.onError
  }

  /** Whether the lock we hold was compromised since it was taken (fail closed: do not append). */
  get compromised(): boolean {
    return this.lost
  }

  /**
   * Take the lock, waiting first for a release of ours still under way, then for another
   * holder: a dead one on this host is replaced at once, a live one is waited for up to the
   * timeout (then StoreBusyError). `optional`: for reading only — where the lock cannot be
   * created (a read-only directory) or is busy, go on without it.
   */
  async acquire({ optional }: { optional: boolean }): Promise<Release> {
    await this.releasing
    let started = Date.now()
    let seen = ''
    let wait = 1
    for (;;) {
      realDirectorySync(this.file)
      try {
        this.lost = false
        const release = await lockfile.lock(this.target, {
          realpath: false,
          fs: this.fs,
          lockfilePath: this.file,
          stale: NEVER_STALE_MS,
          update: 1_000,
          retries: 0,
          onCompromised: (e) => {
            this.lost = true
            this.onError(new StoreFileError(this.file, `lock was compromised (${describe(e)}); this process re-reads the store before its next write`))
          },
        })
        return async () => {
          try {
            unlinkSync(path.join(this.file, OWNER_FILE))
          } catch {
            // already gone (taken over): release reports it
          }
          await release().catch((e: unknown) => {
            if (!this.lost) this.onError(e)
          })
        }
      } catch (e) {
        if (optional && (isErrno(e, 'EACCES') || isErrno(e, 'EPERM') || isErrno(e, 'EROFS'))) return async () => {}
        if (!isErrno(e, 'ELOCKED')) throw new StoreFileError(this.file, `cannot be created: ${describe(e)}`, { cause: e })
        if (this.takeOverIfAbandoned()) continue
        // The wait is bounded per holder: a queue of quick writers taking turns is progress.
        const holder = this.holder()
        const key = holder ? `${holder.pid}@${holder.host}@${holder.since}` : ''
        if (key !== seen) {
          seen = key
          started = Date.now()
        }
        const waited = Date.now() - started
        if (waited > this.timeoutMs) {
          if (optional) return async () => {}
          throw new StoreBusyError(this.target, this.timeoutMs, holder, 1)
        }
        await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random())))
        wait = Math.min(wait * 2, 4) // poll often: a writer that just released re-locks within a millisecond
      }
    }
  }

  /** The current holder as recorded in the lock (undefined: none, or not recorded yet). */
  holder(): LockHolder | undefined {
    try {
      const parsed = JSON.parse(readNoFollowSync(path.join(this.file, OWNER_FILE))?.toString('utf8') ?? '') as unknown
      if (typeof parsed !== 'object' || parsed === null) return undefined
      const o = parsed as Record<string, unknown>
      return {
        ...(typeof o.pid === 'number' ? { pid: o.pid } : {}),
        ...(typeof o.host === 'string' ? { host: o.host } : {}),
        ...(typeof o.started === 'string' ? { started: o.started } : {}),
        ...(typeof o.since === 'string' ? { since: o.since } : {}),
      }
    } catch {
      return undefined
    }
  }

  /**
   * Let go on the next turn of the event loop, so the caller publishes its durable events
   * first (the lock's rmdir is a blocking syscall, see sync-fs.ts). Our next `acquire` waits
   * for it; other processes see the lock free a moment later. Resolves once released.
   */
  releaseSoon(release: Release): Promise<void> {
    this.releasing = new Promise<void>((resolve) => setImmediate(() => void release().then(resolve)))
    return this.releasing
  }

  /** Resolves once a release under way is done. */
  settled(): Promise<void> {
    return this.releasing
  }

  /**
   * Remove the lock when its holder is provably gone: dead on this host (at once), or silent for
   * `staleMs` on another host or unrecorded. Returns whether it was removed (then retry at once).
   */
  private takeOverIfAbandoned(): boolean {
    const holder = this.holder()
    let abandoned: boolean
    if (holder?.pid !== undefined && holder.host === SELF.host) abandoned = !isAlive(holder.pid, holder.started)
    else abandoned = this.ageMs() > this.staleMs
    if (!abandoned) return false
    // Move it aside first (one atomic step), then delete the moved copy at leisure.
    const aside = `${this.file}.abandoned-${process.pid}-${Math.random().toString(36).slice(2)}`
    try {
      renameSync(this.file, aside)
    } catch {
      return true // someone else moved or released it: retry
    }
    rmSync(aside, { recursive: true, force: true })
    return true
  }

  private ageMs(): number {
    try {
      return Date.now() - lstatSync(this.file).mtimeMs
    } catch {
      return 0
    }
  }
}

/** Whether `pid` is a live process, and the same one that recorded `started` (not a reused pid). */
function isAlive(pid: number, started: string | undefined): boolean {
  try {
    process.kill(pid, 0)
  } catch (e) {
    if (isErrno(e, 'ESRCH')) return false
  }
  if (started === undefined) return true
  const now = startedOf(pid).started
  return now === undefined || now === started
}

/** A process's start time as the OS records it (Linux: /proc/<pid>/stat field 22), when readable. */
function startedOf(pid: number): { started?: string } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const started = fields[19]
    return started ? { started } : {}
  } catch {
    return {}
  }
}

/**
 * The lock's file system: `mkdir` of the lock makes it appear with its holder already recorded.
 * The directory is built under a temporary name with `owner.json` inside, then renamed into
 * place (one atomic step). A process killed at any point leaves either no lock or a recorded one
 * (a dead holder on this host is replaced at once), never an unrecorded lock that only the age
 * rule (seconds) could clear — the fencing stress (kill -9 at random points) found that window
 * between the mkdir and the record.
 */
function recordingLockFs(owner: () => string): typeof syncLockFs {
  return {
    ...syncLockFs,
    mkdir: (p: string, callback: (err: NodeJS.ErrnoException | null) => void) => {
      const temp = `${p}.new-${process.pid}-${Math.random().toString(36).slice(2)}`
      try {
        mkdirSync(temp)
        try {
          writeFileSync(path.join(temp, OWNER_FILE), owner(), { flag: 'wx' })
          // Onto a missing path: atomic. Onto an existing lock (never empty: it holds its owner
          // record) it fails with ENOTEMPTY/EEXIST, which is "locked".
          renameSync(temp, p)
        } catch (e) {
          rmSync(temp, { recursive: true, force: true })
          if (isErrno(e, 'ENOTEMPTY') || isErrno(e, 'EEXIST') || isErrno(e, 'EISDIR')) throw Object.assign(new Error(`EEXIST: lock held, mkdir '${p}'`), { code: 'EEXIST' })
          throw e
        }
      } catch (e) {
        process.nextTick(callback, e as NodeJS.ErrnoException)
        return
      }
      process.nextTick(callback, null)
    },
  }
}
