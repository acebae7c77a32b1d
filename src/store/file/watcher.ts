/**
 * Notice of other processes' writes: fs.watch on the store's directory for instant notice, and
 * a timer as the safety net (fs.watch can miss events, and the directory may not exist yet).
 */
import { watch as fsWatch, type FSWatcher } from 'node:fs'
import path from 'node:path'

export interface WatcherOptions {
  /** The files whose changes matter; they must share one directory. */
  files: string[]
  /** Use fs.watch (default true; the poll remains). */
  watchFiles: boolean
  /** The poll interval in ms (0 = no poll). */
  pollIntervalMs: number
}

export class Watcher {
  private readonly dir: string
  private readonly names: Set<string>
  private onChange: (() => void) | null = null
  private watcher: FSWatcher | null = null
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(private readonly options: WatcherOptions) {
    this.dir = path.dirname(options.files[0]!)
    this.names = new Set(options.files.map((f) => path.basename(f)))
  }

  /** Call `onChange` on every notice until stopped. */
  start(onChange: () => void): void {
    this.onChange = onChange
    if (this.options.pollIntervalMs > 0) {
      this.timer = setInterval(onChange, this.options.pollIntervalMs)
      this.timer.unref()
    }
    this.ensure()
  }

  /** Watch the directory if it exists by now (it is created by the first write). */
  ensure(): void {
    if (this.watcher || !this.onChange || !this.options.watchFiles) return
    try {
      this.watcher = fsWatch(this.dir, { persistent: false }, (_type, name) => {
        if (name === null || this.names.has(String(name))) this.onChange?.()
      })
      this.watcher.on('error', () => {
        this.watcher?.close()
        this.watcher = null
      })
    } catch {
      this.watcher = null // directory not there yet: the poll covers it and the next ensure retries
    }
  }

  /** Stop the file watch only (the adapter is closing). */
  unwatch(): void {
    this.watcher?.close()
    this.watcher = null
  }

  stop(): void {
    this.onChange = null
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.unwatch()
  }
}
