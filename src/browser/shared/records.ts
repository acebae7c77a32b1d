/**
 * The annotations a browser page holds, kept the way the store keeps them. Live events go through
 * the store's own `applyAnnotationEvent` (so a status change, a reply or a deletion means here
 * exactly what it means on the server); copies that arrive by other ways — a response to the
 * person's own reply, a fetch after a `missing` event, a page loaded later — replace what is held
 * only when they are at least as new (`rev`). Records form an append-only history per annotation,
 * so the copy with the higher rev already holds every reply of the other: nothing is merged.
 */
import { applyAnnotationEvent, type AnnotationRecords, type ApplyOutcome } from '../../store/apply.js'
import type { Annotation, StoreEvent } from './types.js'

export class ClientAnnotations implements AnnotationRecords {
  /** In arrival order: what was loaded first, then what arrived later. */
  private readonly byId = new Map<string, Annotation>()

  get size(): number {
    return this.byId.size
  }

  get(id: string): Annotation | undefined {
    return this.byId.get(id)
  }

  set(id: string, annotation: Annotation): void {
    this.byId.set(id, annotation)
  }

  delete(id: string): boolean {
    return this.byId.delete(id)
  }

  /** Every record, in arrival order. */
  all(): Annotation[] {
    return [...this.byId.values()]
  }

  /** Hold exactly these (a fresh load). */
  reset(annotations: readonly Annotation[]): void {
    this.byId.clear()
    for (const a of annotations) this.byId.set(a.id, a)
  }

  /** Apply a live event: `applied`, or why not (see `ApplyOutcome`). */
  apply(event: StoreEvent): ApplyOutcome {
    return applyAnnotationEvent(this, event)
  }

  /**
   * A copy from a response or a fetch: held unless the record here is as new or newer (a live
   * event may have brought a later rev before the response came). True when it was taken.
   */
  offer(annotation: Annotation): boolean {
    const held = this.byId.get(annotation.id)
    if (held && held.rev >= annotation.rev) return false
    this.byId.set(annotation.id, annotation)
    return true
  }
}
