/**
 * The inbox's data: every session, the annotations loaded so far for the status filter (a page
 * of 100 at a time, oldest first), and the live stream that keeps them current. Events go through
 * the store's own `applyAnnotationEvent`; what changed is reported through `FeedEvents`, and the
 * page decides what to draw.
 */
import { UnreachableError, describeError, type Api } from '../shared/api.js'
import { LiveStream } from '../shared/live.js'
import { ClientAnnotations } from '../shared/records.js'
import type { Annotation, Presence, Reply, Session, StoreEvent } from '../shared/types.js'
import { FILTERS, type Filter } from './filters.js'

export type LiveState = 'connecting' | 'live' | 'offline'

export interface FeedEvents {
  /** A load finished: everything is new (sessions, annotations, presence). */
  loaded(): void
  /** The list changed as a whole: loading, a page more, an annotation added or removed. */
  listChanged(): void
  /** One loaded annotation changed in place (live). */
  changed(id: string): void
  /** A live annotation was added to the list. */
  added(id: string): void
  presence(): void
  live(state: LiveState): void
  /** A load failed (shown as a banner), or undefined when one worked. */
  error(message: string | undefined): void
  /** The totals per status or the agent's open questions may have changed. */
  stale(what: 'counts' | 'questions'): void
}

const PAGE = 100
const RETRY_MS = 3_000

export class InboxFeed {
  filter: Filter
  loading = false
  presence: Presence | undefined
  /** More pages to load from here (undefined: everything that matches is loaded). */
  nextCursor: string | undefined
  /** How many annotations match the filter on the server. */
  total = 0
  readonly sessions = new Map<string, Session>()
  readonly annotations = new ClientAnnotations()
  private generation = 0
  private stream: LiveStream | undefined

  constructor(
    private readonly api: Api,
    filter: Filter,
    private readonly events: FeedEvents,
  ) {
    this.filter = filter
  }

  /** Does `a` belong under the current filter? (A card that changed status stays, dimmed.) */
  matches(a: Annotation): boolean {
    return this.filter === 'all' || a.status === this.filter
  }

  /** Load from the start (a new filter, a `reset`, or the first time). */
  async reload(): Promise<void> {
    const generation = ++this.generation
    this.loading = true
    this.events.listChanged()
    try {
      const [health, sessions] = await Promise.all([this.api.health(), this.api.allSessions()])
      const page = await this.api.annotations({ limit: PAGE, ...this.statusQuery() })
      if (generation !== this.generation) return // a newer load (another filter) is under way
      this.presence = health.agent
      this.sessions.clear()
      for (const s of sessions) this.sessions.set(s.id, s)
      this.annotations.reset(page.annotations)
      this.nextCursor = page.nextCursor
      this.total = page.total
      this.loading = false
      this.events.error(undefined)
      // Follow from the rev the first list reflects (earlier events are in what we loaded).
      this.stream?.close()
      this.stream = new LiveStream(`${this.api.base}/api/events`, Math.min(health.rev, page.rev), {
        event: (e) => this.onEvent(e),
        reset: () => void this.reload(),
        presence: (p) => {
          this.presence = p
          this.events.presence()
        },
        open: () => this.events.live('live'),
        down: () => this.events.live('offline'),
      })
      this.events.loaded()
    } catch (e) {
      if (generation !== this.generation) return
      this.loading = false
      this.events.error(e instanceof UnreachableError ? `${e.message} Retrying…` : describeError(e))
      this.events.live('offline')
      setTimeout(() => {
        if (generation === this.generation) void this.reload()
      }, RETRY_MS)
      this.events.listChanged()
    }
  }

  async loadMore(): Promise<void> {
    if (this.nextCursor === undefined) return
    const generation = this.generation
    try {
      const page = await this.api.annotations({ limit: PAGE, cursor: this.nextCursor, ...this.statusQuery() })
      if (generation !== this.generation) return
      for (const a of page.annotations) this.annotations.offer(a)
      this.nextCursor = page.nextCursor
      this.total = page.total
      this.events.listChanged()
    } catch (e) {
      this.events.error(describeError(e))
    }
  }

  /** How many annotations there are under each filter; undefined when the server did not answer. */
  async counts(): Promise<Partial<Record<Filter, number>> | undefined> {
    try {
      const totals = await Promise.all(FILTERS.map((f) => this.api.annotations({ limit: 1, ...(f === 'all' ? {} : { status: f }) }).then((p) => p.total)))
      const counts: Partial<Record<Filter, number>> = {}
      FILTERS.forEach((f, i) => (counts[f] = totals[i]))
      return counts
    } catch {
      return undefined
    }
  }

  /** The agent's open questions; undefined when the server did not answer. */
  async questions(): Promise<{ annotation: Annotation; question: Reply }[] | undefined> {
    try {
      return (await this.api.questions()).questions
    } catch {
      return undefined
    }
  }

  async pollHealth(): Promise<void> {
    try {
      this.presence = (await this.api.health()).agent
      this.events.presence()
    } catch {
      this.events.live('offline')
    }
  }

  /** The person deleted it here. */
  removed(id: string): void {
    if (this.annotations.delete(id)) this.total = Math.max(0, this.total - 1)
  }

  private statusQuery(): { status?: Exclude<Filter, 'all'> } {
    return this.filter === 'all' ? {} : { status: this.filter }
  }

  private onEvent(e: StoreEvent): void {
    switch (e.type) {
      case 'session.created':
        this.sessions.set(e.session.id, e.session)
        return
      case 'annotation.created':
        // Newest come last: show it now only if every earlier page is loaded (else "load more" reaches it).
        if (this.matches(e.annotation) && this.nextCursor === undefined && this.annotations.apply(e) === 'applied') {
          this.total++
          this.events.added(e.annotationId)
        }
        this.events.stale('counts')
        return
      case 'annotation.status_changed':
      case 'annotation.replied':
        // Not loaded (another filter, a later page): nothing to show; stale: a response brought it already.
        if (this.annotations.apply(e) === 'applied') this.events.changed(e.annotationId)
        if (e.type === 'annotation.status_changed') this.events.stale('counts')
        this.events.stale('questions')
        return
      case 'annotation.deleted':
      case 'annotation.archived':
        if (this.annotations.apply(e) === 'applied') {
          this.total = Math.max(0, this.total - 1)
          this.events.listChanged()
        }
        this.events.stale('counts')
        this.events.stale('questions')
        return
    }
  }
}
