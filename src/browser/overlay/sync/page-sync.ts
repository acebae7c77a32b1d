/**
 * The page's side of the conversation with the server: which session this page is, its
 * annotations (loaded page after page, then kept current by the live stream), whether the server
 * answers and whether an agent is there. It knows nothing of the DOM: it tells its owner what
 * changed through `SyncEvents`, and the owner decides what to draw.
 */
import { ApiError, UnreachableError, describeError, type Api } from '../../shared/api.js'
import { byCreation } from '../../shared/format.js'
import { LiveStream, type LiveHandlers } from '../../shared/live.js'
import { isPermissionEvent, type PermissionFeed, type PermissionListener } from '../../shared/permission-feed.js'
import { ClientAnnotations } from '../../shared/records.js'
import type { Annotation, Health, Presence, Reply, Session, StoreEvent } from '../../shared/types.js'
import type { PageSessions } from './sessions.js'
import type { LiveLink, SharedLive } from '../../shared/shared-live.js'

/** What the toolbar and the alert show about the server (read by the dock). */
export interface ConnectionState {
  /** undefined until the first answer (or failure). */
  readonly reachable: boolean | undefined
  readonly presence: Presence | undefined
  /** Why nothing is sent: the server serves another project's store (shown while it does). */
  readonly refused: string | undefined
  /** Why loading fails although the server answers (shown until a load works). */
  readonly problem: string | undefined
}

export interface SyncEvents {
  /** The server answered `/health` (where the project is, for editor links). */
  health(health: Health): void
  /** The page's annotations changed (loaded, an event applied, the page left). */
  changed(): void
  /** What the agent is doing changed. */
  presence(): void
  /** Whether the server answers changed, or why loading fails. */
  status(): void
  /** The page's annotations are loaded (send what waits in the outbox). */
  loaded(): void
  /** The server answers again after it did not. */
  back(): void
  /** The agent wrote on one of the page's annotations (`changed` follows). */
  agentReplied(annotation: Annotation, reply: Reply): void
  /** One of the page's annotations was deleted or archived elsewhere (`changed` follows). */
  removed(id: string, how: 'deleted' | 'archived'): void
  /** An agent asks for a picture of one of the page's annotations as it is now (for itself, or as the "after" of its reply `attachTo`). */
  captureRequested(request: CaptureAsk): void
}

/** What a capture asks for: whose element, the answer's name, until when, and the reply an "after" goes on. */
export interface CaptureAsk {
  annotationId: string
  requestId: string
  expiresAt: string
  attachTo?: string
  /** An agent's annotation not anchored yet: the answer describes the element found (fingerprint, label, box). */
  describe?: boolean
  /** An agent's request: the one-time token its answer carries (the page heard it with the request). */
  token?: string
}

/** An annotation an agent filed by selector that no browser has anchored yet. */
const unanchored = (a: Annotation): boolean => a.author === 'agent' && a.element !== undefined && a.element.fingerprint === undefined

/** How long after a resolve that asked for an "after" picture a browser still takes it. */
const AFTER_WINDOW_MS = 10_000

const HEALTH_POLL_MS = 20_000

export class PageSync implements ConnectionState {
  pageKey = location.origin + location.pathname
  reachable: boolean | undefined
  presence: Presence | undefined
  problem: string | undefined
  private session: string | undefined
  private readonly records = new ClientAnnotations()
  private loaded = false
  private generation = 0
  private loadTimer: ReturnType<typeof setTimeout> | undefined
  private loadDelay = 1_000
  private healthTimer: ReturnType<typeof setInterval> | undefined
  private stream: LiveLink | undefined
  private readonly permissionListeners = new Set<PermissionListener>()
  /** The stream open now was asked for the permission events (it goes on carrying them when nobody follows them for a while). */
  private streamHasPermissions = false

  /**
   * The agents' permission requests, heard on this page's own stream: while anyone follows them,
   * the stream is asked for them too (`?permissions=1`: what waits at every connect, then live).
   */
  readonly permissionFeed: PermissionFeed = {
    follow: (listener) => {
      this.permissionListeners.add(listener)
      // Asked for from the next connect; a stream open without them is reopened where it was.
      if (this.stream && !this.streamHasPermissions) this.openStream(this.stream.rev)
      return () => void this.permissionListeners.delete(listener)
    },
  }

  constructor(
    private readonly api: Api,
    private readonly sessions: PageSessions,
    private readonly events: SyncEvents,
    /** The live connection the tabs of the app share (../../shared/shared-live.ts), where the browser can share one. */
    private readonly shared?: SharedLive,
  ) {}

  get refused(): string | undefined {
    return this.api.foreign
  }

  get sessionId(): string | undefined {
    return this.session
  }

  start(): void {
    clearInterval(this.healthTimer)
    this.healthTimer = setInterval(() => void this.pollHealth(), HEALTH_POLL_MS)
    void this.load()
  }

  stop(): void {
    clearInterval(this.healthTimer)
    clearTimeout(this.loadTimer)
    this.generation++
    this.stream?.close()
  }

  // ------------------------------------------------------------------ the page's annotations

  /** In creation order: the numbering of the pins. */
  ordered(): Annotation[] {
    return this.records.all().sort(byCreation)
  }

  get(id: string): Annotation | undefined {
    return this.records.get(id)
  }

  /** The pin number of an annotation (1-based; 0 when it is not on this page). */
  numberOf(id: string): number {
    return this.ordered().findIndex((a) => a.id === id) + 1
  }

  /** A fresher copy from a response (the person's reply or reopen). */
  offer(annotation: Annotation): void {
    this.records.offer(annotation)
  }

  /** The person deleted it here. */
  forget(id: string): void {
    this.records.delete(id)
  }

  /** The sender stored an annotation for `pageKey`'s session. True when it belongs to this page. */
  sent(pageKey: string, annotation: Annotation, sessionId: string): boolean {
    if (pageKey !== this.pageKey) return false
    if (this.session === undefined) this.adopt(pageKey, sessionId)
    if (sessionId === this.session) this.records.offer(annotation)
    return true
  }

  /** Client-side navigation: another page, another session. */
  navigate(pageKey: string): void {
    this.pageKey = pageKey
    this.stream?.close()
    this.stream = undefined
    this.session = undefined
    this.records.reset([])
    this.loaded = false
    void this.load()
  }

  /** A session became known for a page (found or created by the sender's session resolver). */
  adopt(pageKey: string, session: Session | string): void {
    if (pageKey !== this.pageKey || this.session !== undefined) return
    this.session = typeof session === 'string' ? session : session.id
    this.records.reset([])
    // Resume from the session's creation: its first annotation is after it.
    this.openStream(typeof session === 'string' ? (this.stream?.rev ?? 0) : session.rev)
  }

  // ------------------------------------------------------------------ the connection

  /** The person asked to try again now. */
  retry(): void {
    void this.probe()
    if (!this.loaded) void this.load()
  }

  /** The browser is online again. */
  online(): void {
    this.stream?.retryNow()
    if (!this.loaded) void this.load()
  }

  setReachable(ok: boolean): void {
    const was = this.reachable
    this.reachable = ok
    if (ok && was === false) {
      // The server is back: send what waited, and catch up.
      this.stream?.retryNow()
      this.events.back()
      if (!this.loaded) void this.load()
    }
    if (!ok && !this.loaded && this.loadTimer === undefined) {
      this.loadTimer = setTimeout(() => void this.load(), this.loadDelay)
    }
    if (was !== ok) this.events.status()
  }

  private setPresence(p: Presence | undefined): void {
    if (!p) return
    this.presence = p
    this.events.presence()
  }

  private async load(): Promise<void> {
    const generation = ++this.generation
    clearTimeout(this.loadTimer)
    this.loadTimer = undefined
    try {
      const health = await this.api.health()
      if (generation !== this.generation) return
      this.events.health(health)
      this.setPresence(health.agent)
      this.setReachable(true)
      if ((health.permissions?.open ?? 0) > 0) for (const l of this.permissionListeners) l.waiting()
      let rev = health.rev
      let id = this.sessions.stored(this.pageKey)
      let annotations: Annotation[] = []
      if (id !== undefined) {
        try {
          ;({ annotations, rev } = await this.fetchSession(id))
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 404)) throw e
          this.sessions.forget(this.pageKey) // a new store: this page starts a new session when it needs one
          id = undefined
        }
      }
      if (id === undefined) {
        const found = await this.sessions.find(this.pageKey)
        if (found) {
          id = found.id
          this.sessions.remember(this.pageKey, id)
          ;({ annotations, rev } = await this.fetchSession(id))
        }
      }
      if (generation !== this.generation) return
      this.session = id
      this.records.reset(annotations)
      this.loaded = true
      this.problem = undefined
      this.loadDelay = 1_000
      this.openStream(rev)
      this.events.changed()
      this.events.loaded()
      this.anchorAgents(annotations.filter(unanchored))
    } catch (e) {
      if (generation !== this.generation) return
      if (e instanceof UnreachableError) this.setReachable(false)
      else {
        // e.g. 401: a server started with --token, which a browser page cannot send (see the README).
        this.problem = e instanceof ApiError && e.status === 401 ? 'This server requires a token, which the overlay cannot send. Run it without --token on 127.0.0.1.' : describeError(e)
        this.events.status()
      }
      this.loadTimer = setTimeout(() => void this.load(), this.loadDelay)
      this.loadDelay = Math.min(15_000, this.loadDelay * 2)
    }
  }

  /** A session's annotations, page after page, and the rev the first page reflects (the stream resumes from there). */
  private async fetchSession(id: string): Promise<{ annotations: Annotation[]; rev: number }> {
    const first = await this.api.session(id)
    const annotations = [...first.annotations]
    let cursor = first.nextCursor
    while (cursor !== undefined) {
      const page = await this.api.session(id, { cursor })
      annotations.push(...page.annotations)
      cursor = page.nextCursor
    }
    return { annotations, rev: first.rev }
  }

  private openStream(rev: number): void {
    this.stream?.close()
    const path = this.session === undefined ? '/api/events' : `/api/sessions/${encodeURIComponent(this.session)}/events`
    this.streamHasPermissions = this.shared !== undefined || this.permissionListeners.size > 0
    const query = this.streamHasPermissions ? '?permissions=1' : ''
    const handlers: LiveHandlers = {
      event: (e) => this.onEvent(e),
      reset: () => {
        void this.refresh()
        for (const l of this.permissionListeners) l.reset()
      },
      presence: (p) => this.setPresence(p),
      open: () => this.setReachable(true),
      down: () => void this.probe(),
      other: (type) => {
        if (type === 'permission.open') for (const l of this.permissionListeners) l.waiting()
      },
    }
    // The connection the tabs of the app share (every event; this page's are picked in onEvent), else one of its own.
    this.stream = this.shared ? this.shared.open(rev, handlers) : new LiveStream(this.api.base + path + query, rev, handlers, { headers: () => this.api.authHeaders(), transport: this.api.transport })
  }

  /** Reload this page's annotations (after a `reset`), keeping the stream. */
  private async refresh(): Promise<void> {
    if (this.session === undefined) return
    try {
      const { annotations } = await this.fetchSession(this.session)
      this.records.reset(annotations)
      this.events.changed()
    } catch (e) {
      if (e instanceof UnreachableError) this.setReachable(false)
    }
  }

  /** The stream dropped: is the server gone, or only our session? */
  private async probe(): Promise<void> {
    try {
      const health = await this.api.health()
      this.setPresence(health.agent)
      this.setReachable(true)
      if (this.session !== undefined) {
        try {
          await this.api.session(this.session, { limit: 1 })
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) {
            this.sessions.forget(this.pageKey)
            this.stream?.close()
            this.stream = undefined
            this.session = undefined
            void this.load()
          }
        }
      }
    } catch {
      this.setReachable(false)
    }
  }

  private async pollHealth(): Promise<void> {
    if (document.visibilityState === 'hidden') return
    try {
      const health = await this.api.health()
      this.setPresence(health.agent)
      this.setReachable(true)
    } catch {
      this.setReachable(false)
    }
  }

  private onEvent(e: StoreEvent): void {
    if (isPermissionEvent(e)) {
      for (const l of this.permissionListeners) l.event(e)
      return
    }
    if (this.session === undefined) {
      if (e.type === 'session.created' && e.session.url === this.pageKey) {
        this.sessions.remember(this.pageKey, e.session.id)
        this.adopt(this.pageKey, e.session)
      }
      return
    }
    if (e.sessionId !== this.session) return
    if (e.type === 'capture.requested') return this.events.captureRequested(e)
    const outcome = this.records.apply(e)
    // An annotation we have not loaded changed: fetch it. Stale (a copy fetched after the event) or not ours: nothing to do.
    if (outcome === 'missing' && (e.type === 'annotation.status_changed' || e.type === 'annotation.replied')) void this.fetchOne(e.annotationId)
    if (outcome !== 'applied') return
    if (e.type === 'annotation.replied' && e.reply.author === 'agent') this.events.agentReplied(this.records.get(e.annotationId)!, e.reply)
    if (e.type === 'annotation.deleted' || e.type === 'annotation.archived') this.events.removed(e.annotationId, e.type === 'annotation.deleted' ? 'deleted' : 'archived')
    this.events.changed()
    if (e.type === 'annotation.created' && unanchored(e.annotation)) this.anchorAgents([e.annotation])
    if (e.type === 'annotation.status_changed' && e.after && e.reply) {
      this.events.captureRequested({ annotationId: e.annotationId, requestId: e.reply.id, attachTo: e.reply.id, expiresAt: new Date(Date.parse(e.at) + AFTER_WINDOW_MS).toISOString() })
    }
  }

  /** Agents' annotations this page shows and no browser anchored yet: find their elements and say how they look. */
  private anchorAgents(list: readonly Annotation[]): void {
    for (const a of list) this.events.captureRequested({ annotationId: a.id, requestId: `anchor:${a.id}`, expiresAt: new Date(Date.now() + AFTER_WINDOW_MS).toISOString(), describe: true })
  }

  private async fetchOne(id: string): Promise<void> {
    try {
      const a = await this.api.annotation(id)
      if (a.sessionId === this.session) this.records.offer(a)
      this.events.changed()
    } catch {
      // it may be gone already; the next event or reload sorts it out
    }
  }
}
