/**
 * The snapshot file (`store.json`): the state at a rev and the recent-event window, written through
 * lowdb atomically (a new temporary file, fsynced, renamed into place). It is read at open and when
 * another process replaced it; it is written for a new store and when the log is compacted. It is
 * never read or written through a link (see no-follow.ts).
 */
import { accessSync, constants as fsc, lstatSync } from 'node:fs'
import { Low, type Adapter } from 'lowdb'
import { isStoreEvent } from '../events.js'
import { ANNOTATION_STATUSES } from '../vocabulary.js'
import type { Snapshot } from '../persistence.js'
import type { FileIo } from './io.js'
import { STORE_FORMAT, STORE_FORMAT_VERSION, type SnapshotData } from './snapshot-format.js'
import { readNoFollow, regularFileSync, replaceFile } from '../fs/no-follow.js'
import { StoreFileError, UNTOUCHED, describe, isErrno } from '../fs/errors.js'

export { type SnapshotData } from './snapshot-format.js'

/** lowdb's file, read and replaced without following a link. */
class NoFollowJsonFile implements Adapter<SnapshotData | null> {
  constructor(private readonly path: string) {}

  async read(): Promise<SnapshotData | null> {
    const bytes = await readNoFollow(this.path)
    return bytes === undefined ? null : (JSON.parse(bytes.toString('utf8')) as SnapshotData)
  }

  async write(data: SnapshotData | null): Promise<void> {
    await replaceFile(this.path, JSON.stringify(data))
  }
}

export class SnapshotFile {
  private readonly low: Low<SnapshotData | null>
  /** Size of the file as last read or written (0 when there is none). */
  bytes = 0
  /** Whether the file existed when last read or written. */
  exists = false
  private mtimeMs: number | null = null

  constructor(
    readonly path: string,
    private readonly io: FileIo,
  ) {
    this.low = new Low<SnapshotData | null>(new NoFollowJsonFile(path), null)
  }

  /** The snapshot, or null when there is no file. Anything unusable is a StoreFileError. */
  async read(): Promise<Snapshot | null> {
    let raw: unknown
    try {
      const st = regularFileSync(this.path)
      if (st === undefined) return this.missing()
      this.bytes = st.size
      this.exists = true
      this.mtimeMs = st.mtimeMs
      if (st.size === 0) throw new StoreFileError(this.path, `is empty, so it is not a usable store. ${UNTOUCHED}`)
      await this.low.read()
      raw = this.low.data
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      if (isErrno(e, 'ENOENT')) return this.missing()
      if (e instanceof SyntaxError) throw new StoreFileError(this.path, `is not valid JSON (${e.message}). ${UNTOUCHED}`, { cause: e })
      throw new StoreFileError(this.path, `cannot be read: ${describe(e)}`, { cause: e })
    }
    if (raw === null) return this.missing() // removed between the lstat and the open
    return this.check(raw)
  }

  private missing(): null {
    this.exists = false
    return null
  }

  /** Whether the file is there and not the one we last read or wrote (another process compacted). */
  async replacedSinceRead(): Promise<boolean> {
    return Promise.resolve(this.replacedSinceReadSync())
  }

  /** `replacedSinceRead`, synchronously (a stat: microseconds). */
  replacedSinceReadSync(): boolean {
    const st = lstatSync(this.path, { throwIfNoEntry: false })
    return st !== undefined && st.mtimeMs !== this.mtimeMs
  }

  /** Replace the file with this snapshot, durably. */
  async write(snapshot: Snapshot): Promise<void> {
    await this.io.writeSnapshot(this.low, { format: STORE_FORMAT, version: STORE_FORMAT_VERSION, savedAt: new Date().toISOString(), ...snapshot })
    const st = lstatSync(this.path)
    this.bytes = st.size
    this.exists = true
    this.mtimeMs = st.mtimeMs
  }

  /**
   * A snapshot file without write permission is the owner saying "do not change this store".
   * The snapshot is replaced by rename, which the file's own mode does not prevent, and the log
   * beside it may still be writable: so refuse here, before anything is appended or replaced.
   */
  async assertWritable(): Promise<void> {
    if (!this.exists) return
    try {
      accessSync(this.path, fsc.W_OK)
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return
      throw new StoreFileError(this.path, `is read-only (${describe(e)}); nothing was written. ${UNTOUCHED}`, { cause: e })
    }
  }

  private check(raw: unknown): Snapshot {
    const bad = (what: string): never => {
      throw new StoreFileError(this.path, `is not a Marginalia store file (${what}). ${UNTOUCHED}`)
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('expected a JSON object')
    const f = raw as Partial<SnapshotData>
    if (f.format !== STORE_FORMAT) return bad(`"format" should be "${STORE_FORMAT}"`)
    if (typeof f.version !== 'number' || !Number.isInteger(f.version) || f.version < 1) return bad('"version" is missing')
    if (f.version > STORE_FORMAT_VERSION) {
      throw new StoreFileError(
        this.path,
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
    if ((f.identities !== undefined && !Array.isArray(f.identities)) || (f.credentials !== undefined && !Array.isArray(f.credentials))) return bad('"identities" and "credentials" must be arrays')
    for (const i of [...(f.identities ?? []), ...(f.credentials ?? [])]) if (!isRecord(i)) return bad('an identity or credential lacks an id')
    const snapshot: Snapshot = { rev: f.rev, sessions: f.sessions, annotations: f.annotations, recentEvents: f.recentEvents }
    if (f.identities) snapshot.identities = f.identities
    if (f.credentials) snapshot.credentials = f.credentials
    return snapshot
  }
}

function isRecord(value: unknown): value is Record<string, unknown> & { id: string } {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string'
}
