/**
 * The cross-process write lock beside the store file (`store.json.lock`, proper-lockfile's
 * directory lock). One writer at a time takes it for a transaction; readers never need it.
 */
import lockfile from 'proper-lockfile'
import { syncLockFs } from './sync-fs.js'
import { StoreFileError, describe, isErrno } from './errors.js'

/** A lock not refreshed for this long belongs to a dead process (a live holder refreshes it every second). */
const DEFAULT_LOCK_STALE_MS = 5_000

export type Release = () => Promise<void>

export interface FileLockOptions {
  /** The store file the lock guards (named in messages). */
  target: string
  lockFile: string
  /** A lock older than this is considered abandoned by a dead process (ms, ≥ 2000). */
  staleMs?: number
  /** Give up waiting for the lock after this long (ms). */
  timeoutMs?: number
  /** Where a compromised lock is reported. */
  onError: (error: unknown) => void
}

export class FileLock {
  readonly file: string
  private readonly target: string
  private readonly staleMs: number
  private readonly timeoutMs: number
  private readonly onError: (error: unknown) => void
  /** The release of our last lock, still under way (see `releaseSoon`). */
  private releasing: Promise<void> = Promise.resolve()

  constructor(options: FileLockOptions) {
    this.target = options.target
    this.file = options.lockFile
    this.staleMs = Math.max(2_000, options.staleMs ?? DEFAULT_LOCK_STALE_MS)
    this.timeoutMs = options.timeoutMs ?? 30_000
    this.onError = options.onError
  }

  /**
   * Take the lock, waiting first for a release of ours still under way, then for another
   * holder (up to the timeout). `optional`: where the lock cannot be created at all (a
   * read-only directory), go on without it — for reading only.
   */
  async acquire({ optional }: { optional: boolean }): Promise<Release> {
    await this.releasing
    const deadline = Date.now() + this.timeoutMs
    let wait = 1
    for (;;) {
      try {
        const release = await lockfile.lock(this.target, {
          realpath: false,
          fs: syncLockFs,
          lockfilePath: this.file,
          stale: this.staleMs,
          // A live holder refreshes the lock every second, so a stale lock (a killed writer) can be
          // taken over after a few seconds without risking a live writer's lock.
          update: 1_000,
          retries: 0,
          onCompromised: (e) => this.onError(new StoreFileError(this.file, `lock was compromised: ${describe(e)}`)),
        })
        return async () => {
          await release().catch((e: unknown) => this.onError(e))
        }
      } catch (e) {
        if (optional && (isErrno(e, 'EACCES') || isErrno(e, 'EPERM') || isErrno(e, 'EROFS'))) return async () => {}
        if (!isErrno(e, 'ELOCKED')) throw new StoreFileError(this.file, `cannot be created: ${describe(e)}`, { cause: e })
        if (Date.now() > deadline) {
          throw new StoreFileError(this.target, `is locked by another process for over ${this.timeoutMs} ms (lock: ${this.file})`)
        }
        await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random())))
        wait = Math.min(wait * 2, 4) // poll often: a writer that just released re-locks within a millisecond
      }
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
}
