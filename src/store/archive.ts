/**
 * The archive: finished annotations (resolved, dismissed) older than a cut-off move out of the
 * live store into `<dir>/YYYY-MM-DD.jsonl`, one JSON line per annotation with its replies.
 *
 * Order of the two steps: the archive line is written and fsynced first, then the annotation
 * leaves the store (an `annotation.archived` event). Both happen inside one store transaction,
 * under the cross-process lock, against the current state. If the process dies between them,
 * the annotation is in both places until the next archive run, which sees the archived id and
 * only removes it from the store: re-running is always safe and never duplicates a line.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Annotation } from './model.js'

export const DEFAULT_ARCHIVE_AGE_MS = 7 * 24 * 60 * 60 * 1000
const FILE_RE = /^\d{4}-\d{2}-\d{2}\.jsonl$/

export interface ArchiveLine {
  archivedAt: string
  annotation: Annotation
}

export interface ArchiveOptions {
  /** Archive finished annotations last changed more than this long ago (default 7 days; 0 = all finished). */
  olderThanMs?: number
  /** The archive directory (default: `archive/` beside the store file). */
  directory?: string
  /** Test seam: called after the archive lines are durable and before the store lets go of them. */
  onArchiveWritten?: () => void
}

export interface ArchiveResult {
  /** Annotations moved out of the store by this run. */
  archived: number
  /** Of those, how many had been written by an earlier, interrupted run (no new line). */
  completedEarlierRun: number
  /** The file written to, if any line was written. */
  file?: string
  ids: string[]
}

export interface ArchiveFileInfo {
  file: string
  annotations: number
  bytes: number
}

export function archiveFileName(now: Date): string {
  return `${now.toISOString().slice(0, 10)}.jsonl`
}

/** Ids already in the archive (complete lines only: a torn last line is ignored). */
export function archivedIds(directory: string): Set<string> {
  const ids = new Set<string>()
  for (const name of listFiles(directory)) {
    for (const line of completeLines(path.join(directory, name))) {
      try {
        const parsed = JSON.parse(line) as Partial<ArchiveLine>
        if (typeof parsed.annotation?.id === 'string') ids.add(parsed.annotation.id)
      } catch {
        // a damaged line is not an archived annotation
      }
    }
  }
  return ids
}

export function listArchive(directory: string): ArchiveFileInfo[] {
  return listFiles(directory).map((name) => {
    const file = path.join(directory, name)
    return { file, annotations: completeLines(file).filter((l) => l.trim() !== '').length, bytes: statSync(file).size }
  })
}

/** Append lines durably (synchronously: this runs inside the store transaction). */
export function appendArchiveLines(file: string, lines: ArchiveLine[]): void {
  if (lines.length === 0) return
  mkdirSync(path.dirname(file), { recursive: true })
  const fd = openSync(file, 'a')
  try {
    // If an earlier run died mid-line, start on a fresh line.
    const size = statSync(file).size
    const head = size > 0 && !readFileSync(file).subarray(size - 1).equals(Buffer.from('\n')) ? '\n' : ''
    writeSync(fd, head + lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function listFiles(directory: string): string[] {
  try {
    return readdirSync(directory).filter((n) => FILE_RE.test(n)).sort()
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return []
    throw e
  }
}

function completeLines(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const end = text.lastIndexOf('\n')
  return end < 0 ? [] : text.slice(0, end).split('\n')
}
