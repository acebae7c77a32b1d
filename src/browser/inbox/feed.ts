/**
 * The inbox's data: every session, the annotations of the current view loaded so far (a page of
 * 100 at a time, in the view's order: newest first by default), the server's totals per status
 * and per page (session), and the live stream that keeps them current. A new annotation that
 * belongs in the view is inserted where the order puts it and marked new. Events go through the
 * store's own `applyAnnotationEvent`; what changed is reported through `FeedEvents`.
 */
import { UnreachableError, describeError, type Api } from '../shared/api.js'
import { LiveStream, type LiveHandlers } from '../shared/live.js'
import { sharedLive, type LiveLink, type SharedLive } from '../shared/shared-live.js'
import { isPermissionEvent, type PermissionFeed, type PermissionListener } from '../shared/permission-feed.js'
import { ClientAnnotations } from '../shared/records.js'
import type { Annotation, AnnotationStatus, Presence, Reply, SearchList, Session, StoreEvent } from '../shared/types.js'
import { inView, searchParams, type View } from './filters.js'
import { Roster } from './roster.js'

export type LiveState = 'connecting' | 'live' | 'offline'

export interface FeedEvents {
  /** A load finished: everything is new (sessions, annotations, totals, presence). */
  loaded(): void
  /** The list changed as a whole: loading, a page more, an annotation added or removed. */
  listChanged(): void
  /** One loaded annotation changed in place (live). */
  changed(id: string): void
  /** New totals per status and page arrived. */
  totals(): void
  presence(): void
  live(state: LiveState): void
  /** A load failed (shown as a banner), or undefined when one worked. */
  error(message: string | undefined): void
  /** The agent's open questions may have changed. */
  stale(): void
  /** Someone new to filter on appeared (a person who wrote, an agent that replied). */
  roster(): void
}

const PAGE = 100
const RETRY_MS = 3_000
/** Totals are fetched again this long after the last change that may move them (a burst of events costs one fetch). */
const TOTALS_DELAY_MS = 200

export class InboxFeed {
  view: View
  loading = false
  presence: Presence | undefined
  /** More pages to load from here (undefined: everything that matches is loaded). */
  nextCursor: string | undefined
  /** How many annotations match the view on the server. */
  total = 0
  /** Matches per session (page), from the server. */
  sessionTotals: Record<string, number> = {}
  /** Matches per status with the status tab left out, from the server (undefined until the first answer). */
  statusTotals: Record<AnnotationStatus, number> | undefined
  readonly sessions = new Map<string, Session>()
  readonly annotations = new ClientAnnotations()
  /** Ids that arrived live since the view loaded (marked "new" until the person looks at them). */
  readonly fresh = new Set<string>()
  /** The people and agents seen so far (the filters' choices). */
  readonly roster = new Roster()
  private generation = 0
  private stream: LiveLink | undefined
  /** The live connection the inbox's tabs share (one per server: a browser keeps six), where the browser can share one. */
  private readonly shared: SharedLive | undefined
  private readonly permissionListeners = new Set<PermissionListener>()
  /**
   * The agents' permission requests as the inbox's stream carries them (a person's stream of every
   * event has them, live and replayed): the prompts follow them without a connection of their own.
   */
  readonly permissionFeed: PermissionFeed = {
    follow: (listener) => {
      this.permissionListeners.add(listener)
      return () => void this.permissionListeners.delete(listener)
    },
  }
  private totalsTimer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly api: Api,
    view: View,
    private readonly events: FeedEvents,
  ) {
    this.view = view
    this.shared = sharedLive(api.base, api, undefined)
  }

  /** Does `a` belong in the current view? (A card that changed status stays, dimmed.) */
  matches(a: Annotation): boolean {
    return inView(a, this.view)
  }

  /** The loaded annotations in the view's order (ties by id). */
  ordered(): Annotation[] {
    const newest = this.view.sort === 'newest'
    return this.annotations.all().sort((a, b) => {
      const c = a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
      return newest ? -c : c
    })
  }

  /** Load from the start (a new view, a `reset`, or the first time). */
  async reload(): Promise<void> {
    const generation = ++this.generation
    this.loading = true
    this.events.listChanged()
    try {
      const [health, sessions] = await Promise.all([this.api.health(), this.api.allSessions()])
      const page = await this.api.search({ ...searchParams(this.view), limit: PAGE })
      if (generation !== this.generation) return // a newer load (another view) is under way
      this.presence = health.agent
      this.sessions.clear()
      for (const s of sessions) this.sessions.set(s.id, s)
      this.annotations.reset(page.annotations)
      this.roster.noteAll(page.annotations)
      this.fresh.clear()
      this.nextCursor = page.nextCursor
      this.take(page)
      this.loading = false
      this.events.error(undefined)
      // Follow from the rev the first list reflects (earlier events are in what we loaded).
      this.stream?.close()
      const handlers: LiveHandlers = {
        event: (e) => this.onEvent(e),
        reset: () => {
          void this.reload()
          for (const l of this.permissionListeners) l.reset()
        },
        presence: (p) => {
          this.presence = p
          this.events.presence()
        },
        open: () => this.events.live('live'),
        down: () => this.events.live('offline'),
        other: (type) => {
          if (type === 'permission.open') for (const l of this.permissionListeners) l.waiting()
        },
      }
      const from = Math.min(health.rev, page.rev)
      this.stream = this.shared ? this.shared.open(from, handlers) : new LiveStream(`${this.api.base}/api/events`, from, handlers, { headers: () => this.api.authHeaders() })
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
      const page = await this.api.search({ ...searchParams(this.view), limit: PAGE, cursor: this.nextCursor })
      if (generation !== this.generation) return
      for (const a of page.annotations) this.annotations.offer(a)
      if (this.roster.noteAll(page.annotations)) this.events.roster()
      this.nextCursor = page.nextCursor
      this.take(page)
      this.events.listChanged()
    } catch (e) {
      this.events.error(describeError(e))
    }
  }

  /** Fetch the totals again soon (after a change that may move them). */
  refreshTotals(): void {
    clearTimeout(this.totalsTimer)
    this.totalsTimer = setTimeout(() => void this.fetchTotals(), TOTALS_DELAY_MS)
  }

  private async fetchTotals(): Promise<void> {
    const generation = this.generation
    try {
      const page = await this.api.search({ ...searchParams(this.view), limit: 1 })
      if (generation !== this.generation) return
      this.take(page)
      this.events.totals()
    } catch {
      // what is shown stays
    }
  }

  private take(page: SearchList): void {
    this.total = page.total
    this.sessionTotals = page.totals.sessions
    this.statusTotals = page.totals.statuses
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

  /** The person deleted or archived these here. */
  removed(ids: Iterable<string>): void {
    for (const id of ids) if (this.annotations.delete(id)) this.fresh.delete(id)
    this.refreshTotals()
  }

  /** Whether the list holds everything up to the newest annotation (so a new one can go on top, or at the end). */
  private canShowNew(): boolean {
    return this.view.sort === 'newest' || this.nextCursor === undefined
  }

  private onEvent(e: StoreEvent): void {
    if (isPermissionEvent(e)) for (const l of this.permissionListeners) l.event(e)
    if (this.roster.noteEvent(e)) this.events.roster()
    switch (e.type) {
      case 'session.created':
        this.sessions.set(e.session.id, e.session)
        this.events.totals()
        return
      case 'annotation.created':
        // Newest first: it goes on top. Oldest first: at the end, once every earlier page is loaded (else "Load more" reaches it).
        if (this.matches(e.annotation) && this.canShowNew() && this.annotations.apply(e) === 'applied') {
          this.fresh.add(e.annotationId)
          this.total++
          this.sessionTotals[e.sessionId] = (this.sessionTotals[e.sessionId] ?? 0) + 1
          this.events.listChanged()
        }
        this.refreshTotals()
        return
      case 'annotation.status_changed':
      case 'annotation.replied':
      case 'capture.taken':
        // A picture only the agent waited for changes no record.
        if (e.type === 'capture.taken' && e.attachTo === undefined && e.element === undefined) return
        // Not loaded (another view, a later page): nothing to show; stale: a response brought it already.
        if (this.annotations.apply(e) === 'applied') this.events.changed(e.annotationId)
        if (e.type === 'annotation.status_changed' || this.view.author || this.view.agent || this.view.q) this.refreshTotals()
        this.events.stale()
        return
      case 'annotation.deleted':
      case 'annotation.archived':
        if (this.annotations.apply(e) === 'applied') {
          this.fresh.delete(e.annotationId)
          this.events.listChanged()
        }
        this.refreshTotals()
        this.events.stale()
        return
      case 'identity.added':
      case 'identity.revoked':
      case 'credential.issued':
      case 'credential.ended':
      case 'capture.requested':
      case 'permission.requested':
      case 'permission.answered':
        // Who exists and who signed in (the roster took them above), an agent's request for a picture,
        // an agent's permission request (handed to the prompts above): no annotation changes.
        return
      default: {
        // Every kind is handled above: a new kind fails to compile here until the inbox decides what it shows.
        const unhandled: never = e
        return unhandled
      }
    }
  }
}
