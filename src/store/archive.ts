/**
 * The archive: finished annotations (resolved, dismissed) older than a cut-off move out of the
 * live store into an archive the adapter keeps: a directory of `YYYY-MM-DD.jsonl` files, one
 * JSON line per annotation with its replies (archive/directory.ts; the file adapter's default,
 * any adapter's when the caller names a directory), or PostgreSQL's `archive` table.
 *
 * Order of the two steps: the archive keeps the annotations durably first, then they leave the
 * store (one `annotation.archived` event each). Both happen inside one store transaction, under
 * the adapter's exclusive access, against the current state. If the process dies between them,
 * an annotation is in both places until the next archive run, whose `keep` finds it already
 * kept and writes nothing for it: the run only removes it from the store. Re-running is always
 * safe and never duplicates a line.
 */
import type { Annotation } from './model.js'

export const DEFAULT_ARCHIVE_AGE_MS = 7 * 24 * 60 * 60 * 1000

export interface ArchiveLine {
  archivedAt: string
  annotation: Annotation
}

export interface ArchiveOptions {
  /** Archive finished annotations last changed more than this long ago (default 7 days; 0 = all finished). */
  olderThanMs?: number
  /** Only these annotations (a selection in the inbox); still only finished ones past the cut-off. */
  ids?: readonly string[]
  /** An archive directory (default: the adapter's own archive; the file adapter's is `archive/` beside the store file). */
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

/** What `ArchiveSink.keep` did. */
export interface ArchiveWrite {
  /** Where the annotations are kept, as each `annotation.archived` event records it (`archiveFile`). */
  place: string
  /** How many were written now; the others were already kept (by a run that died before the store let go of them). */
  written: number
  /** The full location written to, when anything was written. */
  file?: string
}

/** An archive an adapter offers (`StoreAdapter.archive`). */
export interface ArchiveSink {
  /**
   * Keep these annotations durably, archived at `at`, except those already kept. Called inside
   * the store's write transaction, so no other writer archives at the same time (an adapter
   * with database transactions can write in that same transaction). Resolves once what it
   * wrote survives a crash.
   */
  keep(at: string, annotations: readonly Annotation[]): Promise<ArchiveWrite>
}

