/**
 * The adapter that keeps nothing anywhere: for tests and embedders that want a throwaway store.
 * No other process writes to it, so it never reports outside changes. It archives to a
 * directory when given one (there is no file to put an archive beside).
 */
import type { StoreEvent } from './events.js'
import { ValidationError } from './errors.js'
import type { Decision, LoadResult, StoreAdapter } from './persistence.js'
import type { ArchiveSink } from './archive.js'
import { DirectoryArchive } from './archive/directory.js'

export interface MemoryAdapterOptions {
  /** Default directory for `store.archive()` (none: archiving needs `ArchiveOptions.directory`). */
  archiveDirectory?: string
}

export class MemoryAdapter implements StoreAdapter {
  readonly location = 'memory'
  /** Every batch `transact` appended, in order (observable by tests). */
  readonly batches: StoreEvent[][] = []
  private readonly archiveDirectory: string | undefined

  /** `initial` is what `load` returns (default: an empty store). */
  constructor(
    private readonly initial: LoadResult = { snapshot: null, events: [] },
    options: MemoryAdapterOptions = {},
  ) {
    this.archiveDirectory = options.archiveDirectory
  }

  async load(): Promise<LoadResult> {
    return this.initial
  }

  async transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void> {
    const { events } = await decide([])
    if (events.length > 0) this.batches.push(events)
  }

  async poll(): Promise<StoreEvent[]> {
    return []
  }

  mayHaveNews(): boolean {
    return false // nobody else writes here
  }

  watch(): () => void {
    return () => {}
  }

  async close(): Promise<void> {}

  archive(place: string | undefined): ArchiveSink {
    const directory = place ?? this.archiveDirectory
    if (!directory) throw new ValidationError([{ path: 'directory', message: 'is required for a store without a file' }])
    return new DirectoryArchive(directory)
  }
}
