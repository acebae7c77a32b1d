/**
 * How one event changes the annotations it touches, written once. The server's reducer runs it
 * on an immer draft; the overlay and the inbox run it on their own copies of the records they
 * show. Zod-free, with type-only imports, so both browser bundles import it as it is.
 */
import type { Annotation } from './model.js'
import type { StoreEvent } from './events.js'

/** The records an event is applied to: the reducer's draft shards, or a browser's Map. */
export interface AnnotationRecords {
  get(id: string): Annotation | undefined
  set(id: string, annotation: Annotation): void
  delete(id: string): void
}

/**
 * What applying did:
 * - `applied`: the records now reflect the event;
 * - `missing`: it changes an annotation the records do not hold (the reducer: a damaged log;
 *   a browser: one it has not loaded — fetch it);
 * - `stale`: the record already reflects this rev or a later one (a browser that fetched it
 *   after the event was written); nothing changed;
 * - `ignored`: not an annotation event (sessions are the caller's business).
 */
export type ApplyOutcome = 'applied' | 'missing' | 'stale' | 'ignored'

export function applyAnnotationEvent(records: AnnotationRecords, event: StoreEvent): ApplyOutcome {
  switch (event.type) {
    case 'session.created':
    case 'identity.added':
    case 'identity.revoked':
    case 'credential.issued':
    case 'credential.ended':
    case 'capture.requested':
    case 'permission.requested':
    case 'permission.answered':
      return 'ignored'
    case 'capture.taken': {
      // Only an "after" picture (it joins the reply it was asked for) or the element of an agent's
      // annotation found on the page (it anchors it; the picture is its screenshot) change a record.
      if (event.attachTo === undefined && event.element === undefined) return 'ignored'
      const a = records.get(event.annotationId)
      if (!a) return 'missing'
      if (a.rev >= event.rev) return 'stale'
      if (event.attachTo !== undefined) a.replies = a.replies.map((r) => (r.id === event.attachTo ? { ...r, attachments: [...(r.attachments ?? []), { ...event.attachment, kind: 'after' }] } : r))
      if (event.element !== undefined) {
        a.element = { ...a.element, ...event.element }
        a.attachments = [{ ...event.attachment, kind: 'screenshot' }, ...(a.attachments ?? []).filter((x) => x.kind !== 'screenshot')]
      }
      a.updatedAt = event.at
      a.rev = event.rev
      return 'applied'
    }
    case 'annotation.created': {
      const existing = records.get(event.annotationId)
      if (existing && existing.rev >= event.rev) return 'stale'
      records.set(event.annotationId, { ...event.annotation, replies: [...event.annotation.replies], rev: event.rev })
      return 'applied'
    }
    case 'annotation.status_changed': {
      const a = records.get(event.annotationId)
      if (!a) return 'missing'
      if (a.rev >= event.rev) return 'stale'
      a.status = event.to
      a.updatedAt = event.at
      a.rev = event.rev
      // resolvedAt belongs to the resolved status only: dismissing or reopening clears it.
      if (event.to === 'resolved') a.resolvedAt = event.at
      else delete a.resolvedAt
      if (event.reply) a.replies.push(event.reply)
      return 'applied'
    }
    case 'annotation.replied': {
      const a = records.get(event.annotationId)
      if (!a) return 'missing'
      if (a.rev >= event.rev) return 'stale'
      a.replies.push(event.reply)
      a.updatedAt = event.at
      a.rev = event.rev
      return 'applied'
    }
    case 'annotation.deleted':
    case 'annotation.archived':
      if (!records.get(event.annotationId)) return 'missing'
      records.delete(event.annotationId)
      return 'applied'
    default: {
      const unknown: never = event
      throw new Error(`unknown event type ${JSON.stringify((unknown as { type?: unknown }).type)}`)
    }
  }
}
