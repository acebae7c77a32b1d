/** The few file operations that tests replace to simulate a full or failing disk. */
import type { promises as fsp } from 'node:fs'
import type { Low } from 'lowdb'
import type { SnapshotData } from './snapshot-format.js'

export interface FileIo {
  write(handle: fsp.FileHandle, data: Buffer): Promise<void>
  writeSnapshot(low: Low<SnapshotData | null>, data: SnapshotData): Promise<void>
}

export const defaultIo: FileIo = {
  async write(handle, data) {
    let written = 0
    while (written < data.length) {
      const { bytesWritten } = await handle.write(data, written, data.length - written, null)
      written += bytesWritten
    }
  },
  async writeSnapshot(low, data) {
    low.data = data
    await low.write()
  },
}
