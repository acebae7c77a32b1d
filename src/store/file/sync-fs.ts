/**
 * The callback-style file system proper-lockfile takes (`options.fs`), with every call made
 * synchronously and its callback run on the next tick. The lock's calls are metadata only
 * (mkdir, stat, utimes, rmdir on a local directory): microseconds as syscalls, but ~0.1–0.3 ms
 * each as libuv thread-pool round trips on a small VM, and taking and releasing the lock is
 * three of them on every write. Measured with `--cpu-prof` under the wake benchmark.
 *
 * `stat` and `utimes` do not follow a link: the lock is our own directory, and a link put in its
 * place is looked at, never through.
 */
import { lstatSync, lutimesSync, mkdirSync, rmdirSync, type Stats } from 'node:fs'

type Callback<T> = (err: NodeJS.ErrnoException | null, value?: T) => void

function run<T>(work: () => T, callback: Callback<T>): void {
  let value: T
  try {
    value = work()
  } catch (e) {
    process.nextTick(callback, e as NodeJS.ErrnoException)
    return
  }
  process.nextTick(callback, null, value)
}

/** One shared object: proper-lockfile caches the file system's mtime precision on it. */
export const syncLockFs = {
  mkdir: (p: string, callback: Callback<void>) => run(() => void mkdirSync(p), callback),
  rmdir: (p: string, callback: Callback<void>) => run(() => rmdirSync(p), callback),
  rmdirSync: (p: string) => rmdirSync(p),
  stat: (p: string, callback: Callback<Stats>) => run(() => lstatSync(p), callback),
  utimes: (p: string, atime: Date, mtime: Date, callback: Callback<void>) => run(() => lutimesSync(p, atime, mtime), callback),
}
