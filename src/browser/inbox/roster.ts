/**
 * Who the inbox can filter on: the people who wrote annotations and the agents who
 * replied. Learnt from the data as it arrives (every loaded annotation, every live event) and,
 * when the caller may read it (an admin, the operator, local use), from `GET /api/identities`, so
 * someone whose annotations are not loaded yet is listed too. "You" stands for annotations
 * written with no identity (local use, as everywhere else in the inbox).
 */
import type { Annotation, Reply, StoreEvent } from '../shared/types.js'

export interface Known {
  id: string
  name: string
  kind: 'person' | 'agent'
  revoked?: boolean
}

export class Roster {
  private readonly known = new Map<string, Known>()
  /** An annotation written with no identity was seen. */
  local = false

  /** Add or update one; true when something the filters show changed. */
  add(who: Known): boolean {
    const had = this.known.get(who.id)
    if (had && had.name === who.name && had.kind === who.kind && (who.revoked === undefined || had.revoked === who.revoked)) return false
    this.known.set(who.id, { ...had, ...who })
    return true
  }

  /** Learn from an annotation: its author (or "you") and every agent that replied. */
  note(a: Annotation): boolean {
    let changed = false
    if (a.by) changed = this.add(a.by) || changed
    else if (!this.local) {
      this.local = true
      changed = true
    }
    for (const r of a.replies) changed = this.noteReply(r) || changed
    return changed
  }

  noteAll(list: Iterable<Annotation>): boolean {
    let changed = false
    for (const a of list) changed = this.note(a) || changed
    return changed
  }

  /** Learn from a live event. */
  noteEvent(e: StoreEvent): boolean {
    if (e.type === 'annotation.created') return this.note(e.annotation)
    if ((e.type === 'annotation.replied' || e.type === 'annotation.status_changed') && e.reply) return this.noteReply(e.reply)
    return false
  }

  private noteReply(r: Reply): boolean {
    return r.by?.kind === 'agent' ? this.add(r.by) : false
  }

  /** People, by name. */
  people(): Known[] {
    return this.list('person')
  }

  /** Agents, by name. */
  agents(): Known[] {
    return this.list('agent')
  }

  private list(kind: Known['kind']): Known[] {
    return [...this.known.values()].filter((k) => k.kind === kind).sort((a, b) => a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1))
  }
}
