/**
 * The webhook deliverer and the endpoints' administration, over a `WebhookState`.
 *
 * Delivery: every server runs one `WebhookService`. For each enabled endpoint it takes the
 * endpoint's lease (one server at a time delivers an endpoint), reads the store's events after
 * the endpoint's cursor (`store.changesSince`: the event log is the outbox, so a change any
 * process made is delivered), makes the first one that is a webhook for this endpoint, sends it,
 * and moves the cursor past it on a 2xx. A failure keeps the cursor, counts, and sets the next
 * attempt after a backoff with jitter (or the receiver's Retry-After); an endpoint failing for
 * `disableAfterMs` is disabled. Messages go one at a time per endpoint, in rev order, so they are
 * ordered per annotation. A crash between a 2xx and the cursor's move sends that one message
 * again (same webhook-id): at least once.
 *
 * It wakes on every store change (its own and, through the store's watch, other processes'),
 * and once a second for leases, due retries and endpoints added elsewhere.
 */
import { randomBytes } from 'node:crypto'
import { Subscription } from 'rxjs'
import type { Store } from '../store/core.js'
import { CursorExpiredError } from '../store/errors.js'
import type { Annotation, Reply } from '../store/model.js'
import { DEFAULT_RETRY, nextDelay, retryAfterMs, type RetryPolicy } from './backoff.js'
import { bodyOf, messageId, messageOf, TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type PayloadContext, type WebhookMessage } from './payload.js'
import { DEFAULT_SEND, send, type SendResult } from './send.js'
import { newSecret } from './signing.js'
import type { DeliveryAttempt, EndpointRecord, WebhookState } from './state.js'
import { parseTargetUrl, resolveTarget, WebhookTargetError, type Resolver, type TargetPolicy } from './targets.js'

export interface WebhookServiceOptions {
  policy: TargetPolicy
  retry?: Partial<RetryPolicy>
  /** This server's URL as receivers reach it (attachment URLs in the payloads). */
  publicUrl: () => string
  timeoutMs?: number
  maxResponseBytes?: number
  /** How long a lease lasts without renewal (ms); a server that died is replaced after it. */
  leaseMs?: number
  resolver?: Resolver
  random?: () => number
  log?: (message: string) => void
}

/** An endpoint as admins see it: everything but the secret. */
export interface EndpointView {
  id: string
  url: string
  description?: string
  events: string[]
  createdAt: string
  /** The rev delivered last. */
  cursor: number
  status: 'active' | 'failing' | 'disabled'
  failures: number
  failingSince?: string
  nextAttemptAt?: string
  disabledAt?: string
  disabledReason?: string
}

export interface NewEndpoint {
  url: string
  events?: string[]
  description?: string
}

export function viewOf(e: EndpointRecord): EndpointView {
  return {
    id: e.id,
    url: e.url,
    ...(e.description !== undefined ? { description: e.description } : {}),
    events: e.events,
    createdAt: e.createdAt,
    cursor: e.cursor,
    status: e.disabledAt !== undefined ? 'disabled' : e.failures > 0 ? 'failing' : 'active',
    failures: e.failures,
    ...(e.failingSince !== undefined ? { failingSince: e.failingSince } : {}),
    ...(e.nextAttemptAt !== undefined ? { nextAttemptAt: e.nextAttemptAt } : {}),
    ...(e.disabledAt !== undefined ? { disabledAt: e.disabledAt } : {}),
    ...(e.disabledReason !== undefined ? { disabledReason: e.disabledReason } : {}),
  }
}

/** A request to the admin operations that cannot be met, naming the field and the fix. */
export class WebhookInputError extends Error {
  readonly code = 'VALIDATION_ERROR'
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`)
  }
}

export class WebhookNotFoundError extends Error {
  readonly code = 'NOT_FOUND'
  constructor(id: string) {
    super(`No webhook endpoint ${id}. marginalia webhooks list (or GET /api/webhooks) names them.`)
  }
}

/** Check a new endpoint's fields; the target's form always, its address when a policy is given. */
async function checkNewEndpoint(input: NewEndpoint, policy: TargetPolicy | undefined, resolver?: Resolver): Promise<{ url: string; events: string[]; description?: string }> {
  const events = [...new Set(input.events ?? [])]
  const unknown = events.filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t))
  if (unknown.length > 0) throw new WebhookInputError('events', `unknown type ${unknown.join(', ')}; choose from ${WEBHOOK_EVENT_TYPES.join(', ')} (none: every type)`)
  const description = input.description?.trim()
  if (description !== undefined && description.length > 200) throw new WebhookInputError('description', 'must be at most 200 characters')
  if (typeof input.url !== 'string' || input.url.trim() === '') throw new WebhookInputError('url', 'is required: the http(s) URL the messages are POSTed to')
  const url = parseTargetUrl(input.url.trim())
  // Link-local and metadata addresses are refused at once whatever the policy; the rest of the
  // policy is applied by the server that delivers (a CLI does not know how it is bound).
  // A name that does not resolve now is accepted: it is resolved and checked again at each delivery.
  await resolveTarget(url, policy ?? { allowPrivate: true }, resolver).catch((e: unknown) => {
    if (!(e instanceof WebhookTargetError) || !/does not resolve|no address/.test(e.message)) throw e
  })
  return { url: url.toString(), events: events.sort(), ...(description ? { description } : {}) }
}

/** Add an endpoint to a state; answers its view and its secret (the only time the secret is shown). */
export async function addEndpoint(state: WebhookState, store: Pick<Store, 'rev'>, input: NewEndpoint, policy?: TargetPolicy, resolver?: Resolver): Promise<{ endpoint: EndpointView; secret: string }> {
  const checked = await checkNewEndpoint(input, policy, resolver)
  const record: EndpointRecord = { id: `wh_${randomBytes(8).toString('hex')}`, ...checked, secret: newSecret(), createdAt: new Date().toISOString(), cursor: store.rev, failures: 0 }
  await state.add(record)
  return { endpoint: viewOf(record), secret: record.secret }
}

/** Send the test message to an endpoint now (not from the log; not retried) and record the attempt. */
export async function testEndpoint(state: WebhookState, id: string, policy: TargetPolicy, options: { timeoutMs?: number; maxResponseBytes?: number; resolver?: Resolver } = {}): Promise<DeliveryAttempt> {
  const endpoint = (await state.list()).find((e) => e.id === id)
  if (!endpoint) throw new WebhookNotFoundError(id)
  const now = new Date()
  const id_ = `msg_${endpoint.id}_test_${randomBytes(6).toString('hex')}`
  const body = bodyOf({ type: TEST_EVENT_TYPE, timestamp: now.toISOString(), data: { endpointId: endpoint.id, message: 'A test message from Marginalia: the endpoint is reachable and verifies signatures.' } })
  const result = await send(endpoint.url, endpoint.secret, id_, body, { policy, timeoutMs: options.timeoutMs ?? DEFAULT_SEND.timeoutMs, maxResponseBytes: options.maxResponseBytes ?? DEFAULT_SEND.maxResponseBytes, ...(options.resolver ? { resolver: options.resolver } : {}) })
  const attempt = attemptOf(endpoint.id, id_, TEST_EVENT_TYPE, now, result, 1)
  await state.record(attempt)
  return attempt
}

function attemptOf(endpointId: string, id: string, type: string, at: Date, result: SendResult, attempt: number): DeliveryAttempt {
  return {
    endpointId,
    messageId: id,
    type,
    at: at.toISOString(),
    ok: result.ok,
    ...(result.status !== undefined ? { status: result.status } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
    latencyMs: result.latencyMs,
    attempt,
  }
}

export class WebhookService {
  private readonly owner = `srv_${randomBytes(6).toString('hex')}`
  private readonly retry: RetryPolicy
  private readonly leaseMs: number
  private readonly lanes = new Map<string, Promise<void>>()
  /** Endpoints whose lane should run again once the current run ends (a change came meanwhile). */
  private readonly again = new Set<string>()
  private readonly held = new Set<string>()
  private subscription: Subscription | undefined
  private timer: NodeJS.Timeout | undefined
  private scanning: Promise<void> | undefined
  private closed = false
  private readonly log: (message: string) => void

  constructor(
    private readonly store: Store,
    readonly state: WebhookState,
    private readonly options: WebhookServiceOptions,
  ) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry }
    this.leaseMs = options.leaseMs ?? 15_000
    this.log = options.log ?? (() => {})
  }

  get policy(): TargetPolicy {
    return this.options.policy
  }

  start(): void {
    this.subscription = this.store.changes$.subscribe(() => this.kick())
    this.timer = setInterval(() => this.kick(), 1_000)
    this.timer.unref()
    this.kick()
  }

  async list(): Promise<EndpointView[]> {
    return (await this.state.list()).map(viewOf)
  }

  async add(input: NewEndpoint): Promise<{ endpoint: EndpointView; secret: string }> {
    const added = await addEndpoint(this.state, this.store, input, this.options.policy, this.options.resolver)
    this.kick()
    return added
  }

  async remove(id: string): Promise<void> {
    if (!(await this.state.remove(id))) throw new WebhookNotFoundError(id)
  }

  /** Enable a disabled endpoint again: its failures forgotten, delivery resumes from its cursor. */
  async enable(id: string): Promise<EndpointView> {
    if (!(await this.state.update(id, { disabledAt: null, disabledReason: null, failures: 0, failingSince: null, nextAttemptAt: null }))) throw new WebhookNotFoundError(id)
    this.kick()
    return viewOf((await this.state.list()).find((e) => e.id === id)!)
  }

  async attempts(id: string): Promise<DeliveryAttempt[]> {
    if (!(await this.state.list()).some((e) => e.id === id)) throw new WebhookNotFoundError(id)
    return this.state.attempts(id)
  }

  test(id: string): Promise<DeliveryAttempt> {
    return testEndpoint(this.state, id, this.options.policy, this.sendOptions())
  }

  async close(): Promise<void> {
    this.closed = true
    this.subscription?.unsubscribe()
    clearInterval(this.timer)
    await this.scanning?.catch(() => {})
    await Promise.allSettled([...this.lanes.values()])
    // Let go of the leases so another server takes over at once instead of after they expire.
    await Promise.allSettled([...this.held].map((id) => this.state.release(id, this.owner)))
    await this.state.close()
  }

  private sendOptions(): { timeoutMs: number; maxResponseBytes: number; resolver?: Resolver } {
    return { timeoutMs: this.options.timeoutMs ?? DEFAULT_SEND.timeoutMs, maxResponseBytes: this.options.maxResponseBytes ?? DEFAULT_SEND.maxResponseBytes, ...(this.options.resolver ? { resolver: this.options.resolver } : {}) }
  }

  /** Look at every endpoint soon (a change, a tick). */
  private kick(): void {
    if (this.closed || this.scanning) return
    this.scanning = this.scan()
      .catch((e: unknown) => this.log(`webhooks: could not read the endpoints (${e instanceof Error ? e.message : String(e)}); trying again in a second`))
      .finally(() => (this.scanning = undefined))
  }

  private async scan(): Promise<void> {
    const endpoints = await this.state.list()
    const now = Date.now()
    for (const e of endpoints) {
      if (e.disabledAt !== undefined) continue
      if (e.lease && e.lease.owner !== this.owner && e.lease.until >= now) continue // another server delivers it
      this.runLane(e.id)
    }
  }

  private runLane(id: string): void {
    if (this.lanes.has(id)) {
      this.again.add(id)
      return
    }
    const lane = this.lane(id)
      .catch((e: unknown) => this.log(`webhooks: endpoint ${id}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        this.lanes.delete(id)
        if (this.again.delete(id) && !this.closed) this.runLane(id)
      })
    this.lanes.set(id, lane)
  }

  /** Deliver what is due to one endpoint, one message at a time, while this server holds its lease. */
  private async lane(id: string): Promise<void> {
    while (!this.closed) {
      const endpoint = await this.state.claim(id, this.owner, this.leaseMs)
      if (!endpoint) {
        this.held.delete(id)
        return
      }
      this.held.add(id)
      if (endpoint.nextAttemptAt !== undefined && Date.parse(endpoint.nextAttemptAt) > Date.now()) return // a retry not yet due: a tick comes back
      const next = this.nextMessage(endpoint)
      if (typeof next === 'number') {
        this.log(`webhooks: endpoint ${id} fell behind past the store's window: changes ${endpoint.cursor + 1}..${next} were not sent`)
        await this.state.update(id, { cursor: next }, this.owner)
        continue
      }
      if (!next) {
        // Nothing for this endpoint up to the store's rev: move the cursor past what it does not receive.
        if (this.store.rev > endpoint.cursor) await this.state.update(id, { cursor: this.store.rev }, this.owner)
        return
      }
      const attemptNo = endpoint.failures + 1
      const idOf = messageId(endpoint.id, next.rev)
      const at = new Date()
      const result = await send(endpoint.url, endpoint.secret, idOf, bodyOf(next), { policy: this.options.policy, ...this.sendOptions() })
      await this.state.record(attemptOf(endpoint.id, idOf, next.type, at, result, attemptNo))
      if (result.ok) {
        await this.state.update(id, { cursor: next.rev, failures: 0, failingSince: null, nextAttemptAt: null }, this.owner)
        continue
      }
      const now = Date.now()
      const failingSince = endpoint.failingSince ?? at.toISOString()
      if (now - Date.parse(failingSince) >= this.retry.disableAfterMs) {
        const reason = `every delivery failed since ${failingSince} (last: ${result.error ?? 'no answer'}); enable it again once the receiver works`
        await this.state.update(id, { failures: attemptNo, failingSince, disabledAt: new Date(now).toISOString(), disabledReason: reason, nextAttemptAt: null }, this.owner)
        this.log(`webhooks: endpoint ${id} (${endpoint.url}) disabled: ${reason}`)
        return
      }
      const delay = nextDelay(attemptNo, retryAfterMs(result.retryAfter, now, this.retry.maxMs), this.retry, this.options.random)
      await this.state.update(id, { failures: attemptNo, failingSince, nextAttemptAt: new Date(now + delay).toISOString() }, this.owner)
      return
    }
  }

  /** The first message after the endpoint's cursor it receives; a number (the oldest rev kept) when the cursor fell out of the store's window. */
  private nextMessage(endpoint: EndpointRecord): WebhookMessage | undefined | number {
    let events
    try {
      events = this.store.changesSince(endpoint.cursor)
    } catch (e) {
      if (!(e instanceof CursorExpiredError)) throw e
      return this.store.oldestAvailableRev
    }
    const ctx: PayloadContext = {
      annotation: (annotationId) => this.annotation(annotationId),
      attachmentUrl: (sha) => `${this.options.publicUrl()}/api/attachments/${sha}`,
      repliesBefore: (annotationId, replyId, rev) => this.repliesBefore(annotationId, replyId, rev),
    }
    for (const event of events) {
      const message = messageOf(event, ctx)
      if (message && (endpoint.events.length === 0 || endpoint.events.includes(message.type))) return message
    }
    return undefined
  }

  private repliesBefore(annotationId: string, replyId: string, rev: number): Reply[] {
    const replies = this.annotation(annotationId)?.replies
    const index = replies?.findIndex((r) => r.id === replyId) ?? -1
    if (replies && index >= 0) return replies.slice(0, index)
    // Gone (deleted, archived): the replies before it as the recent events tell them.
    const before: Reply[] = []
    for (const e of this.store.changesSince(this.store.oldestAvailableRev)) {
      if (e.rev >= rev) break
      if (e.type === 'annotation.replied' && e.annotationId === annotationId) before.push(e.reply)
      if (e.type === 'annotation.status_changed' && e.annotationId === annotationId && e.reply) before.push(e.reply)
    }
    return before
  }

  private annotation(id: string): Annotation | undefined {
    try {
      return this.store.getAnnotation(id)
    } catch {
      return undefined
    }
  }
}
