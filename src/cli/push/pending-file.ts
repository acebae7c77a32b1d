/**
 * The pending annotations of a file store, read cheaply: the snapshot (`store.json`) and the events
 * appended after it (`store.events.jsonl`), folded into id → status with plain JSON and no store
 * code (no zod, no RxJS, no lock). What a hook needs at every agent turn, in a few milliseconds.
 *
 * Readers never need the store's lock. A torn last log line (a writer mid-append) is skipped; a
 * compaction between the two reads (the log starts after the snapshot we read) is read again.
 * Every field is checked before use: the files may have been edited by anyone.
 */
import type { PendingRecord } from './item.js'
import { readNoFollowSync } from '../../store/fs/no-follow.js'


/** The store's files: `store.json` and its log `store.events.jsonl` beside it. */
function logFileOf(storeFile: string): string {
  return storeFile.replace(/\.json$/, '') + '.events.jsonl'
}

/** Every live annotation of the store at `storeFile` (all statuses), by id; empty when the store was never written. */
export function readAnnotations(storeFile: string): Map<string, PendingRecord> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const snapshot = readJson(storeFile)
    const base = typeof snapshot?.rev === 'number' ? snapshot.rev : 0
    const byId = new Map<string, PendingRecord>()
    for (const a of Array.isArray(snapshot?.annotations) ? snapshot.annotations : []) {
      const record = asRecord(a)
      if (record) byId.set(record.id, record)
    }
    const log = readText(logFileOf(storeFile))
    let first: number | undefined
    let complete = true
    for (const line of log === undefined ? [] : log.split('\n')) {
      if (line === '') continue
      let event: Record<string, unknown>
      try {
        event = JSON.parse(line) as Record<string, unknown>
      } catch {
        continue // a torn last line: its writer has not finished
      }
      const rev = typeof event.rev === 'number' ? event.rev : 0
      first ??= rev
      if (rev <= base) continue
      fold(byId, event)
    }
    if (first !== undefined && first > base + 1) complete = false // compacted since the snapshot was read
    if (complete) return byId
  }
  throw new Error(`the store ${storeFile} kept changing while it was read`)
}

function fold(byId: Map<string, PendingRecord>, event: Record<string, unknown>): void {
  const id = typeof event.annotationId === 'string' ? event.annotationId : undefined
  if (id === undefined) return
  switch (event.type) {
    case 'annotation.created': {
      const record = asRecord(event.annotation)
      if (record) byId.set(record.id, record)
      return
    }
    case 'annotation.status_changed': {
      const record = byId.get(id)
      if (record && typeof event.to === 'string') byId.set(id, { ...record, status: event.to })
      return
    }
    case 'annotation.deleted':
    case 'annotation.archived':
      byId.delete(id)
      return
    default:
  }
}

function asRecord(value: unknown): PendingRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const a = value as Record<string, unknown>
  if (typeof a.id !== 'string' || typeof a.status !== 'string' || typeof a.comment !== 'string') return undefined
  const source = typeof a.source === 'object' && a.source !== null ? (a.source as Record<string, unknown>) : undefined
  return {
    id: a.id,
    status: a.status,
    comment: a.comment,
    ...(typeof a.sessionId === 'string' ? { sessionId: a.sessionId } : {}),
    ...(typeof a.url === 'string' ? { url: a.url } : {}),
    ...(a.author === 'agent' ? { author: 'agent' } : {}),
    ...(typeof a.createdAt === 'string' ? { createdAt: a.createdAt } : {}),
    ...(source
      ? {
          source: {
            ...(typeof source.file === 'string' ? { file: source.file } : {}),
            ...(typeof source.line === 'number' ? { line: source.line } : {}),
            ...(typeof source.component === 'string' ? { component: source.component } : {}),
          },
        }
      : {}),
  }
}

function readJson(file: string): Record<string, unknown> | undefined {
  const text = readText(file)
  if (text === undefined) return undefined
  const data: unknown = JSON.parse(text)
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined
}

/** A regular file's text, never through a link; undefined when it does not exist. */
function readText(file: string): string | undefined {
  return readNoFollowSync(file)?.toString('utf8')
}
