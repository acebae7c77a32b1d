/**
 * Uploads nothing references cannot fill the disk. Every image uploaded through this server is
 * kept in a ledger with who uploaded it, until an annotation or a reply references it (an event
 * on the store's change stream: also another process's):
 * - a quota: one caller's unreferenced uploads of the last window (default 50 MiB per hour) may
 *   not grow past it; over it, 429 naming the limit and how to change it;
 * - removal: an upload still unreferenced after the grace period (default 10 minutes) is
 *   deleted from the blob store (a periodic sweep), so it stops counting too;
 * - free space: a file store refuses an upload (507) when the disk under its attachments would
 *   keep less than the floor (default 64 MiB). A database's space is the database's business.
 * Only blobs this server wrote are ever removed here: an upload of bytes already stored (perhaps
 * referenced by an archived annotation) is neither counted nor removed.
 */
import type { Subscription } from 'rxjs'
import { referencedBlobs } from '../store/blobs/gc.js'
import type { StoreEvent } from '../store/events.js'
import type { Store } from '../store/store.js'
import type { Caller } from './callers.js'
import { HttpError } from './respond.js'

import { DEFAULT_MIN_FREE_BYTES, DEFAULT_UPLOAD_GRACE_MS, DEFAULT_UPLOAD_QUOTA_BYTES, DEFAULT_UPLOAD_WINDOW_MS } from './defaults.js'

export interface UploadOptions {
  /** Unreferenced bytes one caller may have uploaded within `windowMs` (default 50 MiB; 0 = no quota). */
  quotaBytes?: number
  /** The quota's window (default 1 h). */
  windowMs?: number
  /** An upload nothing references after this long is removed (default 10 min). */
  graceMs?: number
  /** Refuse uploads that would leave less free space than this under a file store's attachments (default 64 MiB; 0 = no check). */
  minFreeBytes?: number
  /** The clock (tests). */
  clock?: () => number
}

interface Entry {
  who: string
  bytes: number
  at: number
}

/** Who an upload counts against: an identity, the operator's token, or local use. */
export function uploaderOf(caller: Caller): string {
  return caller.kind === 'identity' ? caller.principal.identity.id : caller.kind
}

/** The attachment hashes an event references (an annotation's own, a reply's). */
function referencedBy(event: StoreEvent): string[] {
  if (event.type === 'annotation.created') return [...referencedBlobs([event.annotation])]
  if (event.type === 'annotation.replied') return (event.reply.attachments ?? []).map((a) => a.sha256)
  if (event.type === 'annotation.status_changed') return (event.reply?.attachments ?? []).map((a) => a.sha256)
  if (event.type === 'capture.taken' && (event.attachTo !== undefined || event.element !== undefined)) return [event.attachment.sha256]
  return []
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`

export class Uploads {
  readonly quotaBytes: number
  readonly windowMs: number
  readonly graceMs: number
  readonly minFreeBytes: number
  private readonly now: () => number
  private readonly ledger = new Map<string, Entry>()
  private readonly subscription: Subscription
  private timer: NodeJS.Timeout | undefined
  private sweeping: Promise<void> | undefined

  constructor(
    private readonly store: Store,
    options: UploadOptions = {},
    private readonly log: (message: string) => void = () => {},
  ) {
    this.quotaBytes = options.quotaBytes ?? DEFAULT_UPLOAD_QUOTA_BYTES
    this.windowMs = options.windowMs ?? DEFAULT_UPLOAD_WINDOW_MS
    this.graceMs = options.graceMs ?? DEFAULT_UPLOAD_GRACE_MS
    this.minFreeBytes = options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES
    for (const [name, value] of [['uploads.quotaBytes', this.quotaBytes], ['uploads.windowMs', this.windowMs], ['uploads.graceMs', this.graceMs], ['uploads.minFreeBytes', this.minFreeBytes]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number from 0 (got ${String(value)})`)
    }
    this.now = options.clock ?? Date.now
    this.subscription = store.changes$.subscribe((event) => {
      for (const sha of referencedBy(event)) this.ledger.delete(sha)
    })
  }

  /** Start the periodic sweep (a fraction of the grace period, at least every second, at most every minute). */
  start(): void {
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.graceMs / 4)))
    this.timer = setInterval(() => void this.sweep(), every)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.subscription.unsubscribe()
  }

  /** One caller's unreferenced upload bytes within the window. */
  pendingBytes(who: string): number {
    const since = this.now() - this.windowMs
    let sum = 0
    for (const e of this.ledger.values()) if (e.who === who && e.at > since) sum += e.bytes
    return sum
  }

  /** 429 when `bytes` more would take `who` past the quota; 507 when the disk would keep less than the floor. */
  async admit(who: string, bytes: number): Promise<void> {
    if (this.quotaBytes > 0) {
      const pending = this.pendingBytes(who)
      if (pending + bytes > this.quotaBytes) {
        const retryMs = this.retryAfterMs(who)
        throw new HttpError(
          429,
          'RATE_LIMITED',
          `upload quota: ${mib(pending)} uploaded in the last ${Math.round(this.windowMs / 60_000)} min is not yet used by any annotation or reply, and this image would take it past the limit of ${mib(this.quotaBytes)}. Attach the uploads you made, or wait: unused ones are removed after ${Math.round(this.graceMs / 60_000)} min. The operator sets the limit with --upload-quota (startHttpServer's uploads.quotaBytes).`,
          { limit: this.quotaBytes, pending, windowMs: this.windowMs },
          { 'Retry-After': String(Math.max(1, Math.ceil(retryMs / 1000))) },
        )
      }
    }
    if (this.minFreeBytes > 0 && this.store.blobs.freeBytes) {
      const free = await this.store.blobs.freeBytes()
      if (free !== undefined && free - bytes < this.minFreeBytes) {
        throw new HttpError(
          507,
          'INSUFFICIENT_STORAGE',
          `not enough disk space for attachments: ${mib(free)} free under ${this.store.blobs.location}, and the server keeps at least ${mib(this.minFreeBytes)} free. Free some space, or lower the floor with --min-free-space (startHttpServer's uploads.minFreeBytes).`,
          { free, minFree: this.minFreeBytes },
        )
      }
    }
  }

  /** Remember an upload this server wrote (`existed`: the bytes were there already, so not ours to count or remove). */
  uploaded(who: string, sha256: string, bytes: number, existed: boolean): void {
    if (existed || this.ledger.has(sha256)) return
    this.ledger.set(sha256, { who, bytes, at: this.now() })
  }

  /** When the earliest of `who`'s counted uploads stops counting: it leaves the window, or is removed. */
  private retryAfterMs(who: string): number {
    let first = Infinity
    for (const e of this.ledger.values()) if (e.who === who) first = Math.min(first, e.at)
    return first === Infinity ? 0 : Math.max(0, first + Math.min(this.windowMs, this.graceMs) - this.now())
  }

  /** Remove the uploads still unreferenced after the grace period (checked against the store's annotations too). */
  sweep(): Promise<void> {
    this.sweeping ??= this.removeExpired().finally(() => (this.sweeping = undefined))
    return this.sweeping
  }

  private async removeExpired(): Promise<void> {
    const due = this.now() - this.graceMs
    const expired = [...this.ledger].filter(([, e]) => e.at <= due).map(([sha]) => sha)
    if (expired.length === 0) return
    await this.store.sync()
    const refs = referencedBlobs(this.store.listAnnotations())
    for (const sha of expired) {
      this.ledger.delete(sha)
      if (refs.has(sha)) continue
      try {
        await this.store.blobs.delete(sha)
      } catch (e) {
        this.log(`could not remove the unused upload ${sha}: ${e instanceof Error ? e.message : String(e)}`)
      }
    }
  }
}
