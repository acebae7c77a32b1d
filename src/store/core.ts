/**
 * The observable annotation store: commands in, events out. No I/O of its own: its adapter
 * (persistence.ts) keeps the events, and its archive.
 *
 * Every command is validated, decided against the current state inside the adapter's
 * cross-process transaction, becomes events with the next revs, is applied by the one reducer,
 * and is published on `changes$` only once the adapter made it durable (commit.ts).
 */
import type { Observable } from 'rxjs'
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
  type Author,
  type ReplyChannel,
  type Reply,
  type Session,
  type SessionWithAnnotations,
} from './model.js'
import { NotFoundError, StoreClosedError, ValidationError } from './errors.js'
import type { StatusAction } from './machine.js'
import type { StoreEvent } from './events.js'
import type { StoreState } from './reducer.js'
import { defaultIds, type IdKind } from './ids.js'
import { openQuestionOf } from './questions.js'
import { shardGet, shardValues } from './shards.js'
import { LiveState } from './live.js'
import { CommitEngine } from './commit.js'
import * as decide from './commands.js'
import { currentActor } from './actor.js'
import { StoreIdentities } from './identities.js'
import {
  byKeys,
  eventsSince,
  mustGetSession,
  oldestAvailableRev,
  pageAnnotations,
  pageOfKeys,
  pageOfKeysWhere,
  searchAnnotations,
  type AnnotationSearch,
  type SearchPage,
  type AnnotationQuery,
  type ChangesSinceOptions,
  type Page,
  type PageOptions,
} from './queries.js'
import { DEFAULT_ARCHIVE_AGE_MS, type ArchiveOptions, type ArchiveResult, type ArchiveSink } from './archive.js'
import type { LoadResult, StoreAdapter } from './persistence.js'
import { MemoryBlobStore, requireBlobs, type BlobStore } from './blobs/blob-store.js'
import { CaptureTakenInput, RequestCaptureInput, captureTaken, captureToken, requestCapture, type CaptureRequest } from './captures.js'
import { PermissionAnswerInput, PermissionRequestInput, answerPermission, permissionList, requestPermission, type PermissionRecord } from './permissions.js'
import { gcBlobs, referencedBlobs, type GcResult } from './blobs/gc.js'

export interface StoreOptions {
  /** The clock; inject a fixed one for deterministic tests. */
  clock?: () => Date
  /** The id generator; inject a counter for deterministic tests. */
  ids?: (kind: IdKind) => string
  /** How many recent events are kept for `changesSince` (at least 1 000). */
  eventWindow?: number
  /** Where background errors go (default: a line on stderr). */
  onError?: (error: unknown) => void
  /** Where attachment bytes are kept (default: the adapter's `blobStore()`, else in memory). */
  blobs?: BlobStore
}

export const DEFAULT_EVENT_WINDOW = 1_000

export class Store {
  private readonly live: LiveState
  private readonly engine: CommitEngine
  private readonly ids: (kind: IdKind) => string
  private readonly stopWatching: () => void
  private closing: Promise<void> | undefined

  /** Every event, once, in rev order: this process's mutations and those of other processes. */
  readonly changes$: Observable<StoreEvent>
  /**
   * The store was reloaded from storage rather than moved on by events (recovery after a refused
   * event): what a subscriber built from `changes$` may be stale; refetch. Rare.
   */
  readonly resets$: Observable<{ rev: number; reason: string }>
  /** The current state, replayed to new subscribers, then each new state. */
  readonly state$: Observable<StoreState>
  /** Attachment bytes, content-addressed; records on annotations and replies point into it. */
  readonly blobs: BlobStore
  /** People and agents, and their credentials (the team inbox's sign-in): queries and commands. */
  readonly identities: StoreIdentities

  /** A store over what `adapter.load()` returned. Stored events that do not make a store are a StoreDataError. */
  constructor(
    private readonly adapter: StoreAdapter,
    loaded: LoadResult,
    options: StoreOptions = {},
  ) {
    const clock = options.clock ?? (() => new Date())
    const onError = options.onError ?? ((error) => console.error(`marginalia: ${error instanceof Error ? error.message : String(error)}`))
    this.ids = options.ids ?? defaultIds
    this.blobs = options.blobs ?? adapter.blobStore?.() ?? new MemoryBlobStore()
    this.live = LiveState.restore(loaded, adapter.location, Math.max(DEFAULT_EVENT_WINDOW, options.eventWindow ?? DEFAULT_EVENT_WINDOW))
    this.changes$ = this.live.changes.asObservable()
    this.resets$ = this.live.resets.asObservable()
    this.state$ = this.live.states.asObservable()
    this.engine = new CommitEngine(adapter, this.live, clock, onError)
    this.identities = new StoreIdentities(() => this.live.state, this.command.bind(this))
    this.stopWatching = adapter.watch(() => this.engine.requestSync())
  }

  // ---- queries ------------------------------------------------------------------------------

  /** Where the store lives, without secrets (a file path; a database URL without its password). */
  get location(): string {
    return this.adapter.location
  }

  /** The store revision: the number of mutations ever committed. */
  get rev(): number {
    return this.live.state.rev
  }

  /** The current immutable state (frozen; share it freely). */
  getState(): StoreState {
    return this.live.state
  }

  /** All sessions, oldest first. */
  listSessions(): Session[] {
    return byKeys(this.live.indexes.sessions, this.live.state.sessions)
  }

  /** A page of sessions, oldest first; with `url`, only the sessions of that page (its URL exactly). */
  pageSessions(page: PageOptions = {}, url?: string): Page<Session> {
    if (url !== undefined) return pageOfKeysWhere(this.live.indexes.sessions, this.live.state.sessions, page, (s) => s.url === url)
    return pageOfKeys(this.live.indexes.sessions, this.live.state.sessions, page)
  }

  /** One session with all its annotations, oldest first. */
  getSession(id: string): SessionWithAnnotations {
    const session = mustGetSession(this.live.state, id)
    const keys = this.live.indexes.annotationsBySession.get(id)
    return { ...session, annotations: keys ? byKeys(keys, this.live.state.annotations) : [] }
  }

  /** One annotation with every reply. */
  getAnnotation(id: string): Annotation {
    const a = typeof id === 'string' ? shardGet(this.live.state.annotations, id) : undefined
    if (!a) throw new NotFoundError('annotation', String(id))
    return a
  }

  /** Pending annotations of one session, oldest first. */
  getPending(sessionId: string): Annotation[] {
    mustGetSession(this.live.state, sessionId)
    const keys = this.live.indexes.pendingBySession.get(sessionId)
    return keys ? byKeys(keys, this.live.state.annotations) : []
  }

  /** Pending annotations of every session, oldest first. */
  getAllPending(): Annotation[] {
    return byKeys(this.live.indexes.pending, this.live.state.annotations)
  }

  /** Number of pending annotations, in one session or overall. */
  countPending(sessionId?: string): number {
    const { indexes } = this.live
    return sessionId === undefined ? indexes.pending.size : (indexes.pendingBySession.get(sessionId)?.size ?? 0)
  }

  /** Annotations filtered by session and/or status, oldest first. */
  listAnnotations(filter: AnnotationQuery = {}): Annotation[] {
    return this.pageAnnotations(filter).items
  }

  /** A page of annotations matching the query, oldest first (ties by id). */
  pageAnnotations(query: AnnotationQuery = {}, page: PageOptions = {}): Page<Annotation> {
    return pageAnnotations(this.live, query, page)
  }

  /** A search over annotations with totals per session and status (the inbox's list; see queries.ts). */
  searchAnnotations(search: AnnotationSearch = {}, page: PageOptions = {}): SearchPage {
    return searchAnnotations(this.live, search, page)
  }

  /** Annotations whose latest agent question awaits a human answer, oldest first. */
  openQuestions(): { annotation: Annotation; question: Reply }[] {
    return byKeys(this.live.indexes.openQuestions, this.live.state.annotations).map((annotation) => ({ annotation, question: openQuestionOf(annotation)! }))
  }

  /** The oldest rev `changesSince` can still start from (events after it are all kept). */
  get oldestAvailableRev(): number {
    return oldestAvailableRev(this.live.recent, this.live.state.rev)
  }

  /**
   * Events after `rev`, in rev order, from the persisted window of recent events.
   * A rev older than the window raises CursorExpiredError naming the oldest rev still kept.
   */
  changesSince(rev: number, options: ChangesSinceOptions = {}): StoreEvent[] {
    return eventsSince(this.live.recent, this.live.state.rev, rev, options)
  }

  // ---- commands -----------------------------------------------------------------------------

  createSession(input: z.input<typeof CreateSessionInput>): Promise<Session> {
    return this.command('createSession', CreateSessionInput, input, (ctx, args) => decide.createSession(ctx, args))
  }

  /** Add an annotation; `author: 'agent'` when an agent files it (the `annotate` tool). */
  addAnnotation(input: z.input<typeof AddAnnotationInput>, options: { author?: 'agent' } = {}): Promise<Annotation> {
    // The bytes are durable before the reference is committed (a crash leaves an orphan, never a
    // dangling reference). Without attachments the command is queued at once (call order kept).
    const attachments = attachmentsOf(input)
    if (attachments?.length) return requireBlobs(this.blobs, attachments, 'annotation').then(() => this.addAnnotationNow(input, options.author))
    return this.addAnnotationNow(input, options.author)
  }

  private addAnnotationNow(input: z.input<typeof AddAnnotationInput>, author: 'agent' | undefined): Promise<Annotation> {
    return this.command('addAnnotation', AddAnnotationInput, input, (ctx, args) => decide.addAnnotation(ctx, args, author))
  }

  /** pending → acknowledged; anything else is refused. A message becomes an agent reply. */
  acknowledge(id: string, input: z.input<typeof AcknowledgeInput> = {}): Promise<Annotation> {
    return this.statusCommand('acknowledge', AcknowledgeInput, id, input, (args) => ({ author: 'agent', text: args.message }))
  }

  /**
   * any → resolved. A summary becomes a reply by `author` (the agent unless the person resolves it
   * in the inbox); `after`: a browser showing the page adds a picture of the element to it.
   */
  resolve(id: string, input: z.input<typeof ResolveInput> = {}, author: Author = 'agent', options: { after?: boolean; via?: ReplyChannel } = {}): Promise<Annotation> {
    return this.statusCommand('resolve', ResolveInput, id, input, (args) => ({ author, text: args.summary, after: options.after, via: options.via }))
  }

  /** any → dismissed. The reason (required) becomes a reply by `author` (the agent unless the person dismisses it in the inbox). */
  dismiss(id: string, input: z.input<typeof DismissInput>, author: Author = 'agent', options: { via?: ReplyChannel } = {}): Promise<Annotation> {
    return this.statusCommand('dismiss', DismissInput, id, input, (args) => ({ author, text: args.reason, via: options.via }))
  }

  /**
   * acknowledged/resolved/dismissed → pending: the person's action. A message becomes a human
   * reply; `via: 'host'` (the inbox app in the agent's host) makes it an agent reply through the host.
   */
  reopen(id: string, input: z.input<typeof ReopenInput> = {}, options: { via?: ReplyChannel } = {}): Promise<Annotation> {
    return this.statusCommand('reopen', ReopenInput, id, input, (args) => ({ author: options.via ? 'agent' : 'human', text: args.message, via: options.via }))
  }

  /** Append a reply without changing the status. */
  reply(id: string, input: z.input<typeof ReplyInput>): Promise<Annotation> {
    const attachments = attachmentsOf(input)
    if (attachments?.length) return requireBlobs(this.blobs, attachments, 'reply').then(() => this.replyNow(id, input))
    return this.replyNow(id, input)
  }

  private replyNow(id: string, input: z.input<typeof ReplyInput>): Promise<Annotation> {
    return this.command('reply', ReplyInput, input, (ctx, args) => decide.reply(ctx, id, args))
  }

  /** Ask the browsers showing an annotation's page for a picture of its element now (`capture.requested`; see captures.ts). */
  requestCapture(annotationId: string, input: RequestCaptureInput): Promise<CaptureRequest> {
    const token = captureToken()
    return this.command('requestCapture', RequestCaptureInput, input, (ctx, args) => requestCapture(ctx, annotationId, args, token))
  }

  /** A browser's answer to a capture request (`capture.taken`): the picture's bytes are in the blob store first. */
  recordCapture(annotationId: string, input: CaptureTakenInput): Promise<{ requestId: string }> {
    const attachments = attachmentsOf({ attachments: [input?.attachment] })
    return requireBlobs(this.blobs, attachments ?? [], 'capture').then(() =>
      this.command('recordCapture', CaptureTakenInput, input, (ctx, args) => captureTaken(ctx, annotationId, args)),
    )
  }

  /** An agent's permission request, relayed for the person to answer (`permission.requested`; see permissions.ts). */
  requestPermission(input: PermissionRequestInput): Promise<PermissionRecord> {
    return this.command('requestPermission', PermissionRequestInput, input, (ctx, args) => requestPermission(ctx, args))
  }

  /** The person's answer to a permission request (`permission.answered`): once, before it expires. */
  answerPermission(requestId: string, input: PermissionAnswerInput): Promise<PermissionRecord> {
    return this.command('answerPermission', PermissionAnswerInput, input, (ctx, args) => answerPermission(ctx, requestId, args))
  }

  /** The recent permission requests (answered, expired and open), oldest first. */
  listPermissions(): PermissionRecord[] {
    return permissionList(this.live.state.permissions)
  }

  /** Remove an annotation (the person's action). Resolves to the annotation as it was. */
  deleteAnnotation(id: string, input: z.input<typeof DeleteInput> = {}): Promise<Annotation> {
    return this.command('deleteAnnotation', DeleteInput, input, (ctx, args) => decide.deleteAnnotation(ctx, id, args))
  }

  /**
   * Empty the inbox: every annotation, whatever its status, is deleted in one transaction (one
   * `annotation.deleted` event each, so every running process, SSE client and overlay sees them
   * go, and revs go on from where they were). Sessions stay (they are the pages). What
   * `marginalia reset` does; attachments are left to `gcAttachments`.
   */
  clearAnnotations(): Promise<{ deleted: number; ids: string[] }> {
    if (this.closing) return Promise.reject(new StoreClosedError())
    return this.engine.submit(async (state) => decide.clearAnnotations(state))
  }

  /**
   * Move finished annotations (resolved, dismissed) last changed before the cut-off into the
   * adapter's archive (see archive.ts for the crash-safety argument). Each one is one mutation
   * (`annotation.archived`).
   */
  async archive(options: ArchiveOptions = {}): Promise<ArchiveResult> {
    const sink = this.archiveSink(options.directory)
    const olderThanMs = options.olderThanMs ?? DEFAULT_ARCHIVE_AGE_MS
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new ValidationError([{ path: 'olderThanMs', message: 'must be a duration ≥ 0' }])
    if (this.closing) throw new StoreClosedError()
    return this.engine.submit(async (state, now) => {
      // A chosen selection includes what changed this very millisecond (resolved, then archived at once from the inbox).
      const due = decide.dueForArchive(state, new Date(Date.parse(now) - olderThanMs + (options.ids ? 1 : 0)).toISOString(), options.ids)
      // Durable in the archive before the events that remove them are written (same transaction).
      const kept = await sink.keep(now, due)
      options.onArchiveWritten?.()
      return decide.archive(due, kept)
    })
  }

  /**
   * Read-after-write across processes: call before answering a query. Resolves at once when the
   * adapter says nothing can be new (microseconds: returns undefined); otherwise catches up first, so a read that
   * begins after another process's write resolved sees it.
   */
  catchUp(): Promise<void> | undefined {
    // Undefined when already up to date: the caller need not await (a query stays synchronous).
    if (this.closing) return undefined
    if (this.adapter.mayHaveNews && !this.adapter.mayHaveNews()) return undefined
    return this.engine.sync()
  }

  /**
   * Remove attachment blobs no annotation or reply references (older than `graceMs`, so an
   * upload whose annotation is on its way is kept). `alsoReferenced`: blobs kept elsewhere (the archive).
   */
  async gcAttachments(options: { graceMs?: number; alsoReferenced?: Iterable<string> } = {}): Promise<GcResult> {
    await this.sync()
    const refs = referencedBlobs(shardValues(this.live.state.annotations))
    for (const sha of options.alsoReferenced ?? []) refs.add(sha)
    return gcBlobs(this.blobs, refs, { graceMs: options.graceMs })
  }

  /** Catch up now with changes made by other processes (also happens in the background). */
  sync(): Promise<void> {
    return this.closing ? Promise.resolve() : this.engine.sync()
  }

  /** Flush pending writes, let the adapter save what it keeps on the way out, and stop. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopWatching()
      await this.engine.close()
      try {
        await this.adapter.close(this.live.view())
      } finally {
        this.live.complete()
      }
    })()
    return this.closing
  }

  get closed(): boolean {
    return this.closing !== undefined
  }

  // ---- internals ----------------------------------------------------------------------------

  private archiveSink(place: string | undefined): ArchiveSink {
    if (!this.adapter.archive) throw new ValidationError([{ path: 'directory', message: `cannot be used: this store (${this.adapter.location}) keeps no archive` }])
    return this.adapter.archive(place)
  }

  private statusCommand<S extends z.ZodType<{ expectedRev?: number | undefined }>>(
    action: StatusAction,
    schema: S,
    id: string,
    input: z.input<S>,
    messageOf: (args: z.output<S>) => decide.StatusMessage,
  ): Promise<Annotation> {
    return this.command(action, schema, input, (ctx, args) => decide.changeStatus(ctx, action, id, args.expectedRev, messageOf(args)))
  }

  /** Validate the input, then decide and commit the command in the next batch. */
  private command<S extends z.ZodType, T>(name: string, schema: S, input: unknown, decideWith: (ctx: decide.DecideContext, args: z.output<S>) => decide.Verdict<T>): Promise<T> {
    if (this.closing) return Promise.reject(new StoreClosedError())
    const parsed = schema.safeParse(input ?? {})
    if (!parsed.success) return Promise.reject(ValidationError.fromZod(parsed.error, name))
    const args = parsed.data as z.output<S>
    const by = currentActor()
    return this.engine.submit(async (state, now) => {
      const verdict = decideWith({ state, now, newId: this.ids, by }, args)
      if (by) for (const draft of verdict.drafts) draft.by = { ...by }
      return verdict
    })
  }
}

/** The attachment records of an unvalidated input (validation proper happens in the command). */
function attachmentsOf(input: unknown): { sha256: string }[] | undefined {
  const list = typeof input === 'object' && input !== null ? (input as { attachments?: unknown }).attachments : undefined
  if (!Array.isArray(list)) return undefined
  return list.filter((a): a is { sha256: string } => typeof a === 'object' && a !== null && typeof (a as { sha256?: unknown }).sha256 === 'string')
}
