/**
 * Moving a whole store between places (a file and PostgreSQL, either way): `marginalia export`
 * and `marginalia import`. The export is JSON lines and nothing about its pieces is new:
 *
 *   {"format":"marginalia-export","version":1,"source":…,"rev":N,"events":E,"blobs":B,…}  header
 *   {"snapshot":{…}}          the state before the first event, as in store.json (when the
 *                             source no longer holds its history from rev 1)
 *   {"blob":{"sha256":…,"mime":…,"base64":…}}   each attachment, before the events that use it
 *   {"rev":…,"type":…,…}      each event, exactly as a line of store.events.jsonl
 *
 * Import checks the whole file first (format, every event, that they replay into a store),
 * then writes the attachments, then the store in one step, into a place that holds no store.
 */
import { LiveState } from './live.js'
import { DEFAULT_EVENT_WINDOW } from './core.js'
import { isStoreEvent, type StoreEvent } from './events.js'
import { snapshotOf, type LoadResult, type Progress, type Snapshot, type StoreAdapter } from './persistence.js'
import { MarginaliaError, StoreDataError } from './errors.js'
import { sha256Of, SHA256, type BlobStore } from './blobs/blob-store.js'
import { sniffImage } from './blobs/sniff.js'

const EXPORT_FORMAT = 'marginalia-export'
const EXPORT_VERSION = 1

interface ExportHeader {
  format: typeof EXPORT_FORMAT
  version: number
  /** Where it came from (no password). */
  source: string
  /** The store's rev at export. */
  rev: number
  /** Rev of the snapshot line, or null when the events start at rev 1. */
  snapshotRev: number | null
  events: number
  blobs: number
  exportedAt: string
  /** The Marginalia version that wrote it. */
  marginalia: string
}

export interface TransferProgress {
  /** Called as events and attachments are read or written. */
  onProgress?: (phase: 'reading' | 'events' | 'attachments', done: number, total: number) => void
}

export interface ExportResult {
  header: ExportHeader
  lines: number
}

/** An import or export that cannot go on: the reason names the line or the place. */
class TransferError extends MarginaliaError {
  constructor(message: string) {
    super('INVALID_PARAMS', message)
  }
}

/**
 * Write the whole store at `adapter` (not loaded yet) as export lines through `write`. Reads a
 * consistent history (the adapter's `history`, else `load`), checks it replays into a store,
 * and includes every attachment in `blobs`.
 */
export async function exportStore(adapter: StoreAdapter, blobs: BlobStore, write: (line: string) => void | Promise<void>, options: TransferProgress & { version: string; now?: () => Date }): Promise<ExportResult> {
  const progress: Progress = (done, total) => options.onProgress?.('reading', done, total)
  const history = adapter.history ? await adapter.history(progress) : await adapter.load()
  const live = LiveState.restore(history, adapter.location, DEFAULT_EVENT_WINDOW)
  const events = history.events.filter((e) => e.rev > (history.snapshot?.rev ?? 0))
  const list = (await blobs.list()).map((b) => b.sha256).sort()
  const header: ExportHeader = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    source: adapter.location,
    rev: live.state.rev,
    snapshotRev: history.snapshot ? history.snapshot.rev : null,
    events: events.length,
    blobs: list.length,
    exportedAt: (options.now ?? (() => new Date()))().toISOString(),
    marginalia: options.version,
  }
  let lines = 0
  const out = async (value: unknown): Promise<void> => {
    await write(JSON.stringify(value))
    lines++
  }
  await out(header)
  if (history.snapshot) await out({ snapshot: history.snapshot })
  for (const [i, sha256] of list.entries()) {
    const blob = await blobs.get(sha256)
    if (!blob) throw new TransferError(`attachment ${sha256} was listed by ${blobs.location} but could not be read`)
    await out({ blob: { sha256, mime: blob.mime, base64: Buffer.from(blob.bytes).toString('base64') } })
    options.onProgress?.('attachments', i + 1, list.length)
  }
  for (const [i, event] of events.entries()) {
    await out(event)
    if ((i + 1) % 1000 === 0 || i + 1 === events.length) options.onProgress?.('events', i + 1, events.length)
  }
  return { header, lines }
}

/** What an export file holds, checked. */
export interface ParsedExport {
  header: ExportHeader
  base: LoadResult
  /** The state the events lead to, as a snapshot (with its recent-event window). */
  head: Snapshot
  blobs: { sha256: string; mime: string; bytes: Uint8Array }[]
}

/** Read and check export lines: every line parsed, every event valid and in order, the whole replayed. */
export async function parseExport(lines: AsyncIterable<string>, name: string, options: TransferProgress = {}): Promise<ParsedExport> {
  let header: ExportHeader | undefined
  let snapshot: Snapshot | null = null
  const events: StoreEvent[] = []
  const blobs: ParsedExport['blobs'] = []
  let n = 0
  for await (const raw of lines) {
    n++
    const line = raw.trim()
    if (line === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (e) {
      throw new TransferError(`${name} line ${n}: not JSON (${e instanceof Error ? e.message : String(e)})`)
    }
    if (!header) {
      header = checkHeader(value, name)
      continue
    }
    if (isRecord(value) && 'snapshot' in value) {
      if (events.length > 0 || snapshot) throw new TransferError(`${name} line ${n}: a snapshot line must come right after the header, once`)
      snapshot = checkSnapshot(value.snapshot, `${name} line ${n}`)
      continue
    }
    if (isRecord(value) && 'blob' in value) {
      blobs.push(checkBlob(value.blob, `${name} line ${n}`))
      options.onProgress?.('attachments', blobs.length, header.blobs)
      continue
    }
    if (!isStoreEvent(value)) throw new TransferError(`${name} line ${n}: not a store event (each line after the header is a snapshot, a blob or an event as in store.events.jsonl)`)
    const expected = events.length > 0 ? events[events.length - 1]!.rev + 1 : (snapshot?.rev ?? 0) + 1
    if (value.rev !== expected) throw new TransferError(`${name} line ${n}: event rev ${value.rev}, expected ${expected} (events must be consecutive, oldest first)`)
    events.push(value)
    if (events.length % 1000 === 0) options.onProgress?.('events', events.length, header.events)
  }
  if (!header) throw new TransferError(`${name} is empty: expected a ${EXPORT_FORMAT} header line`)
  if (events.length !== header.events || blobs.length !== header.blobs) {
    throw new TransferError(`${name} is incomplete: the header promises ${header.events} events and ${header.blobs} attachments, the file has ${events.length} and ${blobs.length} (was the export cut off?)`)
  }
  options.onProgress?.('events', events.length, header.events)
  const base: LoadResult = { snapshot, events }
  let live: LiveState
  try {
    live = LiveState.restore(base, name, DEFAULT_EVENT_WINDOW)
  } catch (e) {
    throw new TransferError(`${name}: the events do not make a store (${e instanceof Error ? e.message : String(e)})`)
  }
  if (live.state.rev !== header.rev) throw new TransferError(`${name}: the events lead to rev ${live.state.rev}, the header says ${header.rev}`)
  return { header, base, head: snapshotOf(live.view()), blobs }
}

/**
 * Import checked export lines into `adapter`'s place, which must hold no store: attachments
 * first (so no event ever points at a missing one), then the store in one step.
 */
export async function importStore(adapter: StoreAdapter, blobStore: BlobStore, parsed: ParsedExport, options: TransferProgress = {}): Promise<{ rev: number; events: number; blobs: number }> {
  if (!adapter.restore) throw new StoreDataError(adapter.location, 'this kind of store cannot be imported into')
  const putBlobs = async (): Promise<void> => {
    for (const [i, blob] of parsed.blobs.entries()) {
      const sniffed = sniffImage(blob.bytes)
      if (!sniffed) throw new TransferError(`attachment ${blob.sha256}: the bytes are not a PNG, JPEG, WebP or GIF image`)
      await blobStore.put(blob.bytes, sniffed.mime)
      options.onProgress?.('attachments', i + 1, parsed.blobs.length)
    }
  }
  // The attachments go in once the target is known to hold no store, before the events that use them.
  await adapter.restore({ base: parsed.base, head: parsed.head, beforeWrite: putBlobs }, (done, total) => options.onProgress?.('events', done, total))
  return { rev: parsed.head.rev, events: parsed.base.events.length, blobs: parsed.blobs.length }
}

function checkHeader(value: unknown, name: string): ExportHeader {
  if (!isRecord(value) || value.format !== EXPORT_FORMAT) throw new TransferError(`${name} line 1: not a Marginalia export (expected {"format":"${EXPORT_FORMAT}",…}); make one with marginalia export`)
  if (typeof value.version !== 'number' || value.version > EXPORT_VERSION) {
    throw new TransferError(`${name}: export format version ${String(value.version)} is newer than this Marginalia reads (${EXPORT_VERSION}); upgrade Marginalia to import it`)
  }
  for (const key of ['rev', 'events', 'blobs'] as const) {
    if (typeof value[key] !== 'number' || !Number.isInteger(value[key]) || (value[key] as number) < 0) throw new TransferError(`${name} line 1: header field "${key}" must be a whole number`)
  }
  return value as unknown as ExportHeader
}

function checkSnapshot(value: unknown, where: string): Snapshot {
  if (!isRecord(value) || typeof value.rev !== 'number' || !Array.isArray(value.sessions) || !Array.isArray(value.annotations) || !Array.isArray(value.recentEvents)) {
    throw new TransferError(`${where}: the snapshot needs rev, sessions, annotations and recentEvents`)
  }
  if (!value.recentEvents.every(isStoreEvent)) throw new TransferError(`${where}: the snapshot's recentEvents holds something that is not an event`)
  return { rev: value.rev, sessions: value.sessions as Snapshot['sessions'], annotations: value.annotations as Snapshot['annotations'], recentEvents: value.recentEvents }
}

function checkBlob(value: unknown, where: string): ParsedExport['blobs'][number] {
  if (!isRecord(value) || typeof value.sha256 !== 'string' || !SHA256.test(value.sha256) || typeof value.base64 !== 'string' || typeof value.mime !== 'string') {
    throw new TransferError(`${where}: a blob needs sha256 (64 hex digits), mime and base64`)
  }
  const bytes = new Uint8Array(Buffer.from(value.base64, 'base64'))
  if (sha256Of(bytes) !== value.sha256) throw new TransferError(`${where}: the bytes of attachment ${value.sha256} do not match its sha256 (damaged file?)`)
  return { sha256: value.sha256, mime: value.mime, bytes }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
