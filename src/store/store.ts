/**
 * The observable annotation store: commands in, events out.
 *
 * Every command is validated against the current state under the adapter's cross-process
 * transaction, becomes exactly one event with the next `rev`, is applied by the one reducer,
 * and is published on `changes$` only once the adapter made it durable. Commands that arrive
 * while a write is in flight are committed together in the next write (group commit).
 */
import { randomBytes } from 'node:crypto'
import { BehaviorSubject, EMPTY, Subject, defer, from, lastValueFrom, type Observable, type ObservableInput } from 'rxjs'
import { ignoreElements } from 'rxjs/operators'
import path from 'node:path'
import { z } from 'zod'
import {
  AcknowledgeInput,
  AddAnnotationInput,
  CreateSessionInput,
  DeleteInput,
  DismissInput,
  ReopenInput,
  ReplyInput,
  ResolveInput,
  type Annotation,
  type AnnotationStatus,
  type Author,
  type Reply,
  type Session,
  type SessionWithAnnotations,
} from './model.js'
import {
  ConflictError,
  CursorExpiredError,
  MarginaliaError,
  NotFoundError,
  StoreClosedError,
  StoreFileError,
  ValidationError,
} from './errors.js'
import { transition, type StatusAction } from './machine.js'
import type { EventDraft, StoreEvent } from './events.js'
import { applyEvent, emptyState, stateFrom, type StoreState } from './reducer.js'
import { Indexes, idOfKey, openQuestionOf, orderKey, type SortedKeys } from './indexes.js'
import { DEFAULT_ARCHIVE_AGE_MS, appendArchiveLines, archiveFileName, archivedIds, type ArchiveOptions, type ArchiveResult } from './archive.js'

export { orderKey }
import { shardGet, shardValues } from './shards.js'
import { coalesceBatches } from './coalesce.js'
import { MemoryAdapter, type Decision, type LoadResult, type Snapshot, type StoreAdapter } from './persistence.js'

export type IdKind = 'session' | 'annotation' | 'reply'

export interface StoreOptions {
  /** The clock; inject a fixed one for deterministic tests. */
  clock?: () => Date
  /** The id generator; inject a counter for deterministic tests. */
  ids?: (kind: IdKind) => string
  /** How many recent events are kept for `changesSince` (at least 1 000). */
  eventWindow?: number
  /** Background check for changes made by other processes, in ms (default 500; 0 = off). */
  pollIntervalMs?: number
  /** Where background errors go (default: a line on stderr). */
  onError?: (error: unknown) => void
  /** Default directory for `archive()` (openStore sets `archive/` beside the store file). */
  archiveDirectory?: string
}

export const DEFAULT_EVENT_WINDOW = 1_000
export const DEFAULT_POLL_INTERVAL_MS = 500

const ID_PREFIX: Record<IdKind, string> = { session: 'ses', annotation: 'ann', reply: 'rep' }
let idSeq = 0
let entropy = Buffer.alloc(0)
let entropyAt = 0
/** Time-ordered, unique ids: `ann_<time><seq><random>`; sorting by id follows creation order within a process. */
export function defaultIds(kind: IdKind): string {
  idSeq = (idSeq + 1) % 36 ** 3
  if (entropyAt + 5 > entropy.length) {
    entropy = randomBytes(4096)
    entropyAt = 0
  }
  const random = entropy.toString('hex', entropyAt, (entropyAt += 5))
  return `${ID_PREFIX[kind]}_${Date.now().toString(36).padStart(9, '0')}${idSeq.toString(36).padStart(3, '0')}${random}`
}

export interface AnnotationQuery {
  sessionId?: string
  status?: AnnotationStatus
}

export interface PageOptions {
  /** Continue after this position (an order key from a previous page's `lastKey`). */
  after?: string
  /** At most this many items (default: all). */
  limit?: number
}

/** One page of a query, oldest first. A position stays valid while records are added or change status. */
export interface Page<T> {
  items: T[]
  /** How many records match the query in all (not only after the position). */
  total: number
  /** The position of the last item: pass it as `after` for the next page. */
  lastKey?: string
  /** More records follow this page. */
  hasMore: boolean
}

export interface ChangesSinceOptions {
  /** Only events of this session. */
  sessionId?: string
  /** At most this many events (the oldest ones first). */
  limit?: number
}

/** A command decides, against the current state, which events happen and what it returns. */
interface Command<T> {
  kind: 'command'
  decide: (state: StoreState, now: string) => { drafts: EventDraft[]; result: (after: StoreState) => T }
  resolve: (value: T) => void
  reject: (error: unknown) => void
}
interface SyncRequest {
  kind: 'sync'
  done: () => void
}
type WorkItem = Command<unknown> | SyncRequest

export class Store {
  private state: StoreState
  private indexes: Indexes
  private recent: StoreEvent[]
  private readonly eventWindow: number
  private readonly clock: () => Date
  private readonly ids: (kind: IdKind) => string
  private readonly onError: (error: unknown) => void
  private readonly changes = new Subject<StoreEvent>()
  private readonly states: BehaviorSubject<StoreState>
  private readonly work = new Subject<WorkItem>()
  private readonly drained: Promise<void>
  private readonly stopWatching: () => void
  private readonly pollTimer: ReturnType<typeof setInterval> | undefined
  private closing: Promise<void> | undefined
  private syncRequested = false
  private readonly archiveDirectory: string | undefined

  /** Every event, once, in rev order: this process's mutations and those of other processes. */
  readonly changes$: Observable<StoreEvent>
  /** The current state, replayed to new subscribers, then each new state. */
  readonly state$: Observable<StoreState>

  constructor(
    private readonly adapter: StoreAdapter,
    loaded: LoadResult,
    options: StoreOptions = {},
  ) {
    this.clock = options.clock ?? (() => new Date())
    this.ids = options.ids ?? defaultIds
    this.onError = options.onError ?? ((error) => console.error(`marginalia: ${error instanceof Error ? error.message : String(error)}`))
    this.eventWindow = Math.max(DEFAULT_EVENT_WINDOW, options.eventWindow ?? DEFAULT_EVENT_WINDOW)
    this.archiveDirectory = options.archiveDirectory

    const snap = loaded.snapshot
    let state = snap ? stateFrom(snap.rev, snap.sessions, snap.annotations) : emptyState()
    const recent = snap ? snap.recentEvents.filter((e) => e.rev <= snap.rev) : []
    for (const event of loaded.events) {
      if (event.rev <= state.rev) continue
      if (event.rev !== state.rev + 1) throw new MarginaliaError('STORE_FILE', `${adapter.location}: event log jumps from rev ${state.rev} to ${event.rev}`)
      state = replay(adapter.location, state, event)
      recent.push(event)
    }
    this.state = state
    this.recent = recent.slice(-this.eventWindow)
    this.indexes = Indexes.build(state)
    this.states = new BehaviorSubject(state)
    this.changes$ = this.changes.asObservable()
    this.state$ = this.states.asObservable()

    this.drained = lastValueFrom(
      this.work.pipe(
        coalesceBatches((batch) => defer(() => this.runBatch(batch))),
        ignoreElements(),
      ),
      { defaultValue: undefined },
    )
    this.stopWatching = adapter.watch(() => this.requestSync())
    const poll = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
    if (poll > 0 && !(adapter instanceof MemoryAdapter)) {
      this.pollTimer = setInterval(() => this.requestSync(), poll)
      this.pollTimer.unref()
    }
  }

  // ---- queries ------------------------------------------------------------------------------

  /** The store revision: the number of mutations ever committed. */
  get rev(): number {
    return this.state.rev
  }

  /** The current immutable state (frozen; share it freely). */
  getState(): StoreState {
    return this.state
  }

  /** All sessions, oldest first. */
  listSessions(): Session[] {
    return this.byKeys(this.indexes.sessions, this.state.sessions)
  }

  /** A page of sessions, oldest first. */
  pageSessions(page: PageOptions = {}): Page<Session> {
    const limit = page.limit ?? Infinity
    const keys = this.indexes.sessions.slice(page.after, limit === Infinity ? Infinity : limit + 1)
    const hasMore = keys.length > limit
    const shown = hasMore ? keys.slice(0, limit) : keys
    return { items: shown.map((k) => shardGet(this.state.sessions, idOfKey(k))!), total: this.indexes.sessions.size, lastKey: shown.at(-1), hasMore }
  }

  /** One session with all its annotations, oldest first. */
  getSession(id: string): SessionWithAnnotations {
    const session = this.mustGetSession(id)
    return { ...session, annotations: this.annotationsOf(id) }
  }

  /** One annotation with every reply. */
  getAnnotation(id: string): Annotation {
    const a = typeof id === 'string' ? shardGet(this.state.annotations, id) : undefined
    if (!a) throw new NotFoundError('annotation', String(id))
    return a
  }

  /** Pending annotations of one session, oldest first. */
  getPending(sessionId: string): Annotation[] {
    this.mustGetSession(sessionId)
    const keys = this.indexes.pendingBySession.get(sessionId)
    return keys ? this.byKeys(keys, this.state.annotations) : []
  }

  /** Pending annotations of every session, oldest first. */
  getAllPending(): Annotation[] {
    return this.byKeys(this.indexes.pending, this.state.annotations)
  }

  /** Number of pending annotations, in one session or overall. */
  countPending(sessionId?: string): number {
    return sessionId === undefined ? this.indexes.pending.size : (this.indexes.pendingBySession.get(sessionId)?.size ?? 0)
  }

  /** Annotations filtered by session and/or status, oldest first. */
  listAnnotations(filter: AnnotationQuery = {}): Annotation[] {
    return this.pageAnnotations(filter).items
  }

  /**
   * A page of annotations matching the query, oldest first (ties by id). Pending queries and
   * unfiltered ones read an index directly; other status filters scan the matching session.
   */
  pageAnnotations(query: AnnotationQuery = {}, page: PageOptions = {}): Page<Annotation> {
    const { sessionId, status } = query
    if (sessionId !== undefined) this.mustGetSession(sessionId)
    const limit = page.limit ?? Infinity
    let keys: SortedKeys | undefined
    if (status === 'pending') keys = sessionId === undefined ? this.indexes.pending : this.indexes.pendingBySession.get(sessionId)
    else keys = sessionId === undefined ? this.indexes.annotations : this.indexes.annotationsBySession.get(sessionId)
    if (!keys) return { items: [], total: 0, hasMore: false }
    const items: Annotation[] = []
    let lastKey: string | undefined
    let hasMore = false
    if (status === undefined || status === 'pending') {
      for (const key of keys.slice(page.after, limit === Infinity ? Infinity : limit + 1)) {
        if (items.length === limit) {
          hasMore = true
          break
        }
        items.push(shardGet(this.state.annotations, idOfKey(key))!)
        lastKey = key
      }
      return { items, total: keys.size, lastKey, hasMore }
    }
    let total = 0
    for (const key of keys) {
      const a = shardGet(this.state.annotations, idOfKey(key))!
      if (a.status !== status) continue
      total++
      if (page.after !== undefined && key <= page.after) continue
      if (items.length < limit) {
        items.push(a)
        lastKey = key
      } else hasMore = true
    }
    return { items, total, lastKey, hasMore }
  }

  /** The oldest rev `changesSince` can still start from (events after it are all kept). */
  get oldestAvailableRev(): number {
    return this.recent.length > 0 ? this.recent[0]!.rev - 1 : this.state.rev
  }

  /**
   * Events after `rev`, in rev order, from the persisted window of recent events.
   * A rev older than the window raises CursorExpiredError naming the oldest rev still kept.
   */
  changesSince(rev: number, options: ChangesSinceOptions = {}): StoreEvent[] {
    if (!Number.isInteger(rev) || rev < 0) throw new ValidationError([{ path: 'sinceRev', message: 'must be an integer ≥ 0' }])
    if (rev > this.state.rev) {
      throw new ValidationError([{ path: 'sinceRev', message: `must be at most the current rev ${this.state.rev}` }])
    }
    if (rev < this.oldestAvailableRev) throw new CursorExpiredError(rev, this.oldestAvailableRev + 1, this.state.rev)
    const first = this.recent.length > 0 ? this.recent[0]!.rev : this.state.rev + 1
    let events = this.recent.slice(rev + 1 - first)
    if (options.sessionId !== undefined) events = events.filter((e) => e.sessionId === options.sessionId)
    if (options.limit !== undefined) events = events.slice(0, Math.max(0, options.limit))
    return events
  }

  // ---- commands -----------------------------------------------------------------------------

  createSession(input: z.input<typeof CreateSessionInput>): Promise<Session> {
    return this.command('createSession', CreateSessionInput, input, (state, now, args) => {
      const session: Session = { id: this.ids('session'), url: args.url, createdAt: now, updatedAt: now, rev: 0 }
      if (args.name !== undefined) session.name = args.name
      return {
        drafts: [{ type: 'session.created', sessionId: session.id, session }],
        result: (after) => shardGet(after.sessions, session.id)!,
      }
    })
  }

  addAnnotation(input: z.input<typeof AddAnnotationInput>): Promise<Annotation> {
    return this.command('addAnnotation', AddAnnotationInput, input, (state, now, args) => {
      if (!shardGet(state.sessions, args.sessionId)) throw new NotFoundError('session', args.sessionId)
      const { sessionId, comment, ...optional } = args
      const annotation: Annotation = {
        id: this.ids('annotation'),
        sessionId,
        status: 'pending',
        comment,
        ...(JSON.parse(JSON.stringify(optional)) as Partial<Annotation>),
        replies: [],
        createdAt: now,
        updatedAt: now,
        rev: 0,
      }
      return {
        drafts: [{ type: 'annotation.created', sessionId, annotationId: annotation.id, annotation }],
        result: (after) => shardGet(after.annotations, annotation.id)!,
      }
    })
  }

  /** pending → acknowledged; anything else is refused. A message becomes an agent reply. */
  acknowledge(id: string, input: z.input<typeof AcknowledgeInput> = {}): Promise<Annotation> {
    return this.statusCommand('acknowledge', AcknowledgeInput, id, input, (args) => ({ author: 'agent', message: args.message }))
  }

  /** any → resolved. A summary becomes an agent reply. */
  resolve(id: string, input: z.input<typeof ResolveInput> = {}): Promise<Annotation> {
    return this.statusCommand('resolve', ResolveInput, id, input, (args) => ({ author: 'agent', message: args.summary }))
  }

  /** any → dismissed. The reason (required) becomes an agent reply. */
  dismiss(id: string, input: z.input<typeof DismissInput>): Promise<Annotation> {
    return this.statusCommand('dismiss', DismissInput, id, input, (args) => ({ author: 'agent', message: args.reason }))
  }

  /** acknowledged/resolved/dismissed → pending: the person's action. A message becomes a human reply. */
  reopen(id: string, input: z.input<typeof ReopenInput> = {}): Promise<Annotation> {
    return this.statusCommand('reopen', ReopenInput, id, input, (args) => ({ author: 'human', message: args.message }))
  }

  /** Append a reply without changing the status. */
  reply(id: string, input: z.input<typeof ReplyInput>): Promise<Annotation> {
    return this.command('reply', ReplyInput, input, (state, now, args) => {
      const current = this.mustGetFrom(state, id, args.expectedRev)
      const reply: Reply = { id: this.ids('reply'), author: args.author, message: args.message, createdAt: now }
      if (args.kind !== undefined) reply.kind = args.kind
      return {
        drafts: [{ type: 'annotation.replied', sessionId: current.sessionId, annotationId: id, reply }],
        result: (after) => shardGet(after.annotations, id)!,
      }
    })
  }

  /** Remove an annotation (the person's action). Resolves to the annotation as it was. */
  deleteAnnotation(id: string, input: z.input<typeof DeleteInput> = {}): Promise<Annotation> {
    return this.command('deleteAnnotation', DeleteInput, input, (state, _now, args) => {
      const current = this.mustGetFrom(state, id, args.expectedRev)
      return {
        drafts: [{ type: 'annotation.deleted', sessionId: current.sessionId, annotationId: id, from: current.status }],
        result: () => current,
      }
    })
  }

  /**
   * Move finished annotations (resolved, dismissed) last changed before the cut-off into the
   * archive (see archive.ts for the crash-safety argument). Each one is one mutation
   * (`annotation.archived`).
   */
  async archive(options: ArchiveOptions = {}): Promise<ArchiveResult> {
    const directory = options.directory ?? this.archiveDirectory
    if (!directory) throw new ValidationError([{ path: 'directory', message: 'is required for a store without a file' }])
    const olderThanMs = options.olderThanMs ?? DEFAULT_ARCHIVE_AGE_MS
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new ValidationError([{ path: 'olderThanMs', message: 'must be a duration ≥ 0' }])
    await this.sync()
    const already = archivedIds(directory)
    return this.command('archive', z.object({}), {}, (state, now, _args) => {
      const cutoff = new Date(Date.parse(now) - olderThanMs).toISOString()
      const due = this.listAnnotations({})
        .map((a) => shardGet(state.annotations, a.id))
        .filter((a): a is Annotation => a !== undefined && (a.status === 'resolved' || a.status === 'dismissed') && a.updatedAt < cutoff)
      const name = archiveFileName(new Date(now))
      const fresh = due.filter((a) => !already.has(a.id))
      appendArchiveLines(path.join(directory, name), fresh.map((annotation) => ({ archivedAt: now, annotation })))
      options.onArchiveWritten?.()
      const result: ArchiveResult = { archived: due.length, completedEarlierRun: due.length - fresh.length, ids: due.map((a) => a.id) }
      if (fresh.length > 0) result.file = path.join(directory, name)
      return {
        drafts: due.map((a) => ({ type: 'annotation.archived' as const, sessionId: a.sessionId, annotationId: a.id, from: a.status, archiveFile: name })),
        result: () => result,
      }
    })
  }

  /** Annotations whose latest agent question awaits a human answer, oldest first. */
  openQuestions(): { annotation: Annotation; question: Reply }[] {
    return this.byKeys<Annotation>(this.indexes.openQuestions, this.state.annotations).map((annotation) => ({ annotation, question: openQuestionOf(annotation)! }))
  }

  /** Catch up now with changes made by other processes (also happens in the background). */
  sync(): Promise<void> {
    if (this.closing || this.adapter instanceof MemoryAdapter) return Promise.resolve()
    return new Promise((done) => this.work.next({ kind: 'sync', done }))
  }

  /** Flush pending writes, save a final snapshot where the adapter keeps one, and stop. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopWatching()
      if (this.pollTimer) clearInterval(this.pollTimer)
      this.work.complete()
      await this.drained
      try {
        await this.adapter.close(() => this.snapshot())
      } finally {
        this.changes.complete()
        this.states.complete()
      }
    })()
    return this.closing
  }

  get closed(): boolean {
    return this.closing !== undefined
  }

  // ---- internals ----------------------------------------------------------------------------

  private statusCommand<S extends z.ZodType<{ expectedRev?: number | undefined }>>(
    action: StatusAction,
    schema: S,
    id: string,
    input: z.input<S>,
    replyOf: (args: z.output<S>) => { author: Author; message: string | undefined },
  ): Promise<Annotation> {
    return this.command(action, schema, input, (state, now, args) => {
      const current = this.mustGetFrom(state, id, args.expectedRev)
      const to = transition(action, id, current.status)
      const { author, message } = replyOf(args)
      const draft: EventDraft = { type: 'annotation.status_changed', sessionId: current.sessionId, annotationId: id, action, from: current.status, to }
      if (message !== undefined) draft.reply = { id: this.ids('reply'), author, message, createdAt: now }
      return { drafts: [draft], result: (after) => shardGet(after.annotations, id)! }
    })
  }

  private command<S extends z.ZodType, T>(
    name: string,
    schema: S,
    input: unknown,
    decide: (state: StoreState, now: string, args: z.output<S>) => { drafts: EventDraft[]; result: (after: StoreState) => T },
  ): Promise<T> {
    if (this.closing) return Promise.reject(new StoreClosedError())
    const parsed = schema.safeParse(input ?? {})
    if (!parsed.success) return Promise.reject(ValidationError.fromZod(parsed.error, name))
    const args = parsed.data as z.output<S>
    return new Promise<T>((resolve, reject) => {
      const item: Command<T> = { kind: 'command', decide: (state, now) => decide(state, now, args), resolve, reject }
      this.work.next(item as Command<unknown>)
    })
  }

  private requestSync(): void {
    if (this.syncRequested || this.closing) return
    this.syncRequested = true
    this.work.next({ kind: 'sync', done: () => {} })
  }

  /**
   * Run one batch. Synchronous adapters (memory) complete synchronously, so a memory store's
   * events are emitted during the command call itself (which also makes marble tests exact).
   */
  private runBatch(batch: WorkItem[]): ObservableInput<void> {
    const commands = batch.filter((item): item is Command<unknown> => item.kind === 'command')
    const syncs = batch.filter((item): item is SyncRequest => item.kind === 'sync')
    this.syncRequested = false
    const finish = (): void => {
      for (const s of syncs) s.done()
    }
    const failed = (error: unknown): void => {
      if (commands.length === 0) this.onError(error)
      for (const c of commands) c.reject(error)
      finish()
    }
    try {
      const pending = commands.length === 0 ? this.pollOnce() : this.commit(commands)
      if (!pending) {
        finish()
        return EMPTY
      }
      return from(pending.then(finish, failed))
    } catch (error) {
      failed(error)
      return EMPTY
    }
  }

  private pollOnce(): Promise<void> | undefined {
    const polled = this.adapter.poll()
    if (!isPromise(polled)) {
      this.publishExternal(polled)
      return undefined
    }
    return polled.then((events) => this.publishExternal(events))
  }

  private commit(commands: Command<unknown>[]): Promise<void> | undefined {
    const steps: { event: StoreEvent; before: StoreState; after: StoreState }[] = []
    const outcomes: { command: Command<unknown>; ok: boolean; value: unknown }[] = []
    const decide = (external: StoreEvent[]): Decision => {
      this.publishExternal(external)
      steps.length = 0
      outcomes.length = 0
      let tentative = this.state
      for (const command of commands) {
        const mark = steps.length
        const start = tentative
        try {
          const now = this.clock().toISOString()
          const { drafts, result } = command.decide(tentative, now)
          for (const draft of drafts) {
            const event = stamp(draft, tentative.rev + 1, now)
            const after = applyEvent(tentative, event)
            steps.push({ event, before: tentative, after })
            tentative = after
          }
          outcomes.push({ command, ok: true, value: result(tentative) })
        } catch (error) {
          steps.length = mark
          tentative = start
          outcomes.push({ command, ok: false, value: error })
        }
      }
      const final = tentative
      const events = steps.map((s) => s.event)
      return { events, snapshot: () => this.snapshot(final, [...this.recent, ...events]) }
    }
    const committed = (): void => {
      for (const step of steps) this.publish(step.event, step.before, step.after)
      if (steps.length > 0) this.states.next(this.state)
      for (const o of outcomes) (o.ok ? o.command.resolve : o.command.reject)(o.value)
    }
    const notWritten = (writeError: unknown): void => {
      // Nothing of this batch was written: refused commands keep their own error, the rest get the write error.
      for (const o of outcomes) o.command.reject(o.ok ? writeError : o.value)
      for (const c of commands) c.reject(writeError)
    }
    let written: Promise<void> | void
    try {
      written = this.adapter.transact(decide)
    } catch (writeError) {
      notWritten(writeError)
      return undefined
    }
    if (!isPromise(written)) {
      committed()
      return undefined
    }
    return written.then(committed, notWritten)
  }

  private publishExternal(events: StoreEvent[]): void {
    let changed = false
    for (const event of events) {
      if (event.rev <= this.state.rev) continue
      if (event.rev !== this.state.rev + 1) {
        throw new MarginaliaError('STORE_FILE', `${this.adapter.location}: expected event rev ${this.state.rev + 1}, found ${event.rev}`)
      }
      const before = this.state
      this.publish(event, before, replay(this.adapter.location, before, event))
      changed = true
    }
    if (changed) this.states.next(this.state)
  }

  private publish(event: StoreEvent, before: StoreState, after: StoreState): void {
    this.state = after
    this.indexes.apply(event, before, after)
    this.recent.push(event)
    if (this.recent.length >= 2 * this.eventWindow) this.recent = this.recent.slice(-this.eventWindow)
    this.changes.next(event)
  }

  private snapshot(state: StoreState = this.state, recent: StoreEvent[] = this.recent): Snapshot {
    return {
      rev: state.rev,
      sessions: [...shardValues(state.sessions)],
      annotations: [...shardValues(state.annotations)],
      recentEvents: recent.slice(-this.eventWindow),
    }
  }

  private mustGetSession(id: string): Session {
    const s = typeof id === 'string' ? shardGet(this.state.sessions, id) : undefined
    if (!s) throw new NotFoundError('session', String(id))
    return s
  }

  private mustGetFrom(state: StoreState, id: string, expectedRev: number | undefined): Annotation {
    if (typeof id !== 'string' || id.length === 0) throw new ValidationError([{ path: 'id', message: 'must be a non-empty string' }])
    const current = shardGet(state.annotations, id)
    if (!current) throw new NotFoundError('annotation', id)
    if (expectedRev !== undefined && expectedRev !== current.rev) throw new ConflictError(id, expectedRev, current.rev, current.status)
    return current
  }

  private annotationsOf(sessionId: string): Annotation[] {
    const keys = this.indexes.annotationsBySession.get(sessionId)
    return keys ? this.byKeys(keys, this.state.annotations) : []
  }

  private byKeys<T>(keys: SortedKeys, shards: StoreState['sessions'] | StoreState['annotations']): T[] {
    const out: T[] = []
    for (const key of keys) {
      const record = shardGet(shards as never, idOfKey(key))
      if (record) out.push(record as T)
    }
    return out
  }
}

/**
 * Apply an event read from storage. One that does not fit the state (it names an annotation
 * that does not exist: a damaged log) is an error naming the store, not a bare reducer error.
 */
function replay(location: string, state: StoreState, event: StoreEvent): StoreState {
  try {
    return applyEvent(state, event)
  } catch (e) {
    throw new StoreFileError(location, `event rev ${event.rev} (${event.type}) in its event log cannot be applied: ${e instanceof Error ? e.message : String(e)}. The file was left untouched.`, { cause: e })
  }
}

function isPromise<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function'
}

function stamp(draft: EventDraft, rev: number, at: string): StoreEvent {
  const event = { ...draft, rev, at } as StoreEvent
  if (event.type === 'session.created') event.session = { ...event.session, rev }
  if (event.type === 'annotation.created') event.annotation = { ...event.annotation, rev }
  return event
}

/** A store that keeps everything in memory (tests, embedding). */
export function createMemoryStore(options: StoreOptions = {}): Store {
  return new Store(new MemoryAdapter(), { snapshot: null, events: [] }, options)
}

