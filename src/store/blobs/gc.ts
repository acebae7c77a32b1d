/** Remove blobs no annotation or reply references (orphans of a crash, or of archived annotations). */
import type { Annotation } from '../model.js'
import type { BlobStore } from './blob-store.js'

/** Blobs younger than this are kept: an upload whose annotation is about to be committed. */
const DEFAULT_BLOB_GRACE_MS = 10 * 60 * 1000

export function referencedBlobs(annotations: Iterable<Annotation>): Set<string> {
  const refs = new Set<string>()
  for (const a of annotations) {
    for (const att of a.attachments ?? []) refs.add(att.sha256)
    for (const r of a.replies) for (const att of r.attachments ?? []) refs.add(att.sha256)
  }
  return refs
}

export interface GcResult {
  removed: string[]
  kept: number
}

export async function gcBlobs(blobs: BlobStore, referenced: ReadonlySet<string>, options: { graceMs?: number; now?: number } = {}): Promise<GcResult> {
  const graceMs = options.graceMs ?? DEFAULT_BLOB_GRACE_MS
  const now = options.now ?? Date.now()
  const removed: string[] = []
  let kept = 0
  for (const blob of await blobs.list()) {
    if (referenced.has(blob.sha256) || now - blob.writtenAt < graceMs) {
      kept++
      continue
    }
    await blobs.delete(blob.sha256)
    removed.push(blob.sha256)
  }
  return { removed, kept }
}
