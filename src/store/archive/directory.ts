/**
 * The archive as a directory of `YYYY-MM-DD.jsonl` files, one JSON line per annotation with its
 * replies (see ../archive.ts for the order of the two steps and why a re-run is safe). The file
 * and memory adapters offer it, and PostgreSQL when the caller names a directory.
 *
 * Synchronous calls: an archive run is rare and small, and runs under the store's lock anyway.
 * Neither the folder nor a file in it is used through a link (see ../fs/no-follow.ts).
 */
import { closeSync, constants as fsc, fstatSync, fsyncSync, lstatSync, readdirSync, readSync, writeSync } from 'node:fs'
import path from 'node:path'
import { ensureDirectorySync, openNoFollowSync, readNoFollowSync, realDirectorySync, regularFileSync } from '../fs/no-follow.js'
import type { Annotation } from '../model.js'
import type { ArchiveFileInfo, ArchiveLine, ArchiveSink, ArchiveWrite } from '../archive.js'

const FILE_RE = /^\d{4}-\d{2}-\d{2}\.jsonl$/

export class DirectoryArchive implements ArchiveSink {
  constructor(readonly directory: string) {}

  async keep(at: string, annotations: readonly Annotation[]): Promise<ArchiveWrite> {
    const place = archiveFileName(new Date(at))
    const file = path.join(this.directory, place)
    if (annotations.length === 0) return { place, written: 0 }
    const already = archivedIds(this.directory)
    const fresh = annotations.filter((a) => !already.has(a.id))
    appendArchiveLines(file, fresh.map((annotation) => ({ archivedAt: at, annotation })))
    return fresh.length > 0 ? { place, written: fresh.length, file } : { place, written: 0 }
  }
}

export function archiveFileName(now: Date): string {
  return `${now.toISOString().slice(0, 10)}.jsonl`
}

/** Ids already in the archive (complete lines only: a torn last line is ignored). */
function archivedIds(directory: string): Set<string> {
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
    return { file, annotations: completeLines(file).filter((l) => l.trim() !== '').length, bytes: lstatSync(file).size }
  })
}

/** Append lines durably (fsynced before it returns). */
function appendArchiveLines(file: string, lines: ArchiveLine[]): void {
  if (lines.length === 0) return
  ensureDirectorySync(path.dirname(file))
  const fd = openNoFollowSync(file, fsc.O_RDWR | fsc.O_APPEND, { create: regularFileSync(file) === undefined })
  try {
    // If an earlier run died mid-line, start on a fresh line.
    const size = fstatSync(fd).size
    const last = Buffer.alloc(1)
    const head = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10 ? '\n' : ''
    writeSync(fd, head + lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function listFiles(directory: string): string[] {
  try {
    if (!realDirectorySync(directory)) return []
    return readdirSync(directory).filter((n) => FILE_RE.test(n)).sort()
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return []
    throw e
  }
}

function completeLines(file: string): string[] {
  const text = readNoFollowSync(file)?.toString('utf8') ?? ''
  const end = text.lastIndexOf('\n')
  return end < 0 ? [] : text.slice(0, end).split('\n')
}
