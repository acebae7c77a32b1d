/**
 * The page log and the steps' recorder as the overlay holds them: the early script's, taken over,
 * when it ran (the head snippet's loader.js, the Vite loader, the extension); otherwise installed
 * as overlay.js starts, from the `early` chunk (overlay.js does not carry a second copy of them).
 * And the window's key presses: heard in the recorder's keydown listener when it offers to call
 * the overlay's (one listener a key press costs the page, not two), else by a listener of our own.
 */
import { installedPageLog, pageLogEnabled, type PageLogHandle } from '../early/page-log.js'
import { installedSteps, type StepsHandle } from '../early/steps.js'
import { stepsEnabled } from '../early/steps-settings.js'
import { load } from './chunks/load.js'

export class Recorders {
  /** What the page logged (console errors, failed requests), unless turned off for this origin. */
  pageLog: PageLogHandle | undefined
  /** The steps to reproduce, unless turned off for this origin. */
  steps: StepsHandle | undefined
  /** The overlay's keydown listener, once `listenKeys` has been called. */
  private keyListener: ((e: KeyboardEvent) => void) | undefined
  /** The window's keydown listener of our own, while the recorder does not call the overlay's from its own. */
  private ownKeys: AbortController | undefined
  private stopped = false

  constructor(
    /** Requests to the overlay's own server are never in the page log. */
    private readonly ownRequest: (url: string) => boolean,
    /** Typed values in the steps: masked (true), kept (false), or by origin (undefined). */
    private readonly maskInputs: boolean | undefined,
  ) {
    const wantLog = pageLogEnabled()
    const wantSteps = stepsEnabled()
    this.pageLog = wantLog ? installedPageLog(window) : undefined
    this.pageLog?.ignore(ownRequest)
    this.steps = wantSteps ? installedSteps(window) : undefined
    if (maskInputs !== undefined) this.steps?.mask(maskInputs)
    if ((!wantLog || this.pageLog) && (!wantSteps || this.steps)) return
    load('early').then(
      (early) => {
        if (this.stopped) return
        if (wantLog && !this.pageLog) this.pageLog = early.installPageLog(window, ownRequest)
        if (wantSteps && !this.steps) {
          this.steps = early.installSteps(window)
          if (maskInputs !== undefined) this.steps.mask(maskInputs)
          if (this.keyListener) this.listenKeys(this.keyListener)
        }
      },
      () => {}, // the chunk cannot be fetched: annotations go without the page log and the steps
    )
  }

  /** Hear the window's key presses with `listener` (see the module comment). */
  listenKeys(listener: (e: KeyboardEvent) => void): void {
    if (this.stopped) return
    this.keyListener = listener
    if (this.steps?.keys) {
      this.steps.keys(listener)
      this.ownKeys?.abort()
      this.ownKeys = undefined
    } else if (!this.ownKeys) {
      this.ownKeys = new AbortController()
      window.addEventListener('keydown', listener, { capture: true, signal: this.ownKeys.signal })
    }
  }

  /** Turned on while off at load: the log starts now (it has nothing from before). */
  startPageLog(on: boolean): void {
    if (!on || this.pageLog) return
    load('early').then(
      (early) => {
        if (!this.stopped && !this.pageLog) this.pageLog = early.installPageLog(window, this.ownRequest)
      },
      () => {}, // asked again the next time it is turned on
    )
  }

  /** The overlay is removed: its key listener goes; the recorders keep recording for the next one. */
  stop(): void {
    this.stopped = true
    this.ownKeys?.abort()
    this.steps?.keys?.(undefined)
  }
}
