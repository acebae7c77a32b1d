/**
 * Where endpoints, their cursors and their delivery logs are kept, beside the store and never in
 * its event log: the signing secret must be readable by every server that delivers, but the event
 * log is what the SSE streams, the overlay, exports and archives read. The file store keeps them
 * in `webhooks.json` beside `store.json` (mode 0600, see file-state.ts); PostgreSQL in two tables
 * of the store's schema (postgres-state.ts); an in-memory store in memory.
 *
 * The outbox is the store's event log itself: each endpoint has a cursor (the rev delivered last),
 * so a change any process made (a serve, an agent's `marginalia mcp`, the CLI, an embedding) is
 * delivered by whichever server holds the endpoint's lease. The lease (owner, until) is taken and
 * renewed atomically (under the file's lock; by a conditional UPDATE), and a cursor moves only for
 * the holder, so one server delivers an endpoint's stream at a time, in rev order.
 */

export interface EndpointRecord {
  id: string
  url: string
  description?: string
  /** The types it receives; empty: every type. */
  events: string[]
  /** `whsec_…`: never leaves the server but in the answer that creates it. */
  secret: string
  createdAt: string
  /** The rev delivered last (every change after it is still to send). */
  cursor: number
  /** Failures in a row of the message at the cursor. */
  failures: number
  /** When the current run of failures began. */
  failingSince?: string
  /** Not before this time (ISO) is the next attempt made. */
  nextAttemptAt?: string
  disabledAt?: string
  disabledReason?: string
  /** Who delivers it now and until when (ms since the epoch). */
  lease?: { owner: string; until: number }
}

/** One attempt in an endpoint's delivery log. */
export interface DeliveryAttempt {
  endpointId: string
  /** The webhook-id sent. */
  messageId: string
  type: string
  at: string
  ok: boolean
  status?: number
  error?: string
  latencyMs: number
  /** 1 for the first try of this message, 2 for its first retry … */
  attempt: number
}

/** What may change on an endpoint; `null` removes an optional field. */
export type EndpointPatch = { [K in keyof Omit<EndpointRecord, 'id' | 'secret' | 'createdAt' | 'lease'>]?: EndpointRecord[K] | null }

/** How many attempts each endpoint's log keeps. */
export const LOG_LIMIT = 50

export interface WebhookState {
  readonly location: string
  list(): Promise<EndpointRecord[]>
  add(endpoint: EndpointRecord): Promise<void>
  /** False when there was no such endpoint. */
  remove(id: string): Promise<boolean>
  /** Take or renew the lease of `id` for `owner` for `ms`; the record when held, null otherwise (another holder, disabled or gone). */
  claim(id: string, owner: string, ms: number): Promise<EndpointRecord | null>
  /** Change an endpoint, only while `owner` holds its lease (undefined owner: an admin's change). False when not applied. */
  update(id: string, patch: EndpointPatch, owner?: string): Promise<boolean>
  /** Let go of a lease held by `owner` (on close: another server takes over at once). */
  release(id: string, owner: string): Promise<void>
  record(attempt: DeliveryAttempt): Promise<void>
  /** The endpoint's last attempts, newest first. */
  attempts(id: string, limit?: number): Promise<DeliveryAttempt[]>
  close(): Promise<void>
}

/** Apply a patch to a record (null removes the field). */
export function patched(record: EndpointRecord, patch: EndpointPatch): EndpointRecord {
  const next: Record<string, unknown> = { ...record }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k]
    else if (v !== undefined) next[k] = v
  }
  return next as unknown as EndpointRecord
}

/** Whether a lease may be taken by `owner` at `now`. */
export function mayClaim(record: EndpointRecord, owner: string, now: number): boolean {
  return record.disabledAt === undefined && (record.lease === undefined || record.lease.owner === owner || record.lease.until < now)
}

/** Endpoints in a state that lives only as long as the process (an in-memory store). */
export class MemoryWebhookState implements WebhookState {
  readonly location = 'memory'
  private endpoints: EndpointRecord[] = []
  private log: DeliveryAttempt[] = []

  async list(): Promise<EndpointRecord[]> {
    return this.endpoints.map((e) => ({ ...e }))
  }
  async add(endpoint: EndpointRecord): Promise<void> {
    this.endpoints.push({ ...endpoint })
  }
  async remove(id: string): Promise<boolean> {
    const before = this.endpoints.length
    this.endpoints = this.endpoints.filter((e) => e.id !== id)
    this.log = this.log.filter((a) => a.endpointId !== id)
    return this.endpoints.length < before
  }
  async claim(id: string, owner: string, ms: number): Promise<EndpointRecord | null> {
    const i = this.endpoints.findIndex((e) => e.id === id)
    const now = Date.now()
    if (i < 0 || !mayClaim(this.endpoints[i]!, owner, now)) return null
    this.endpoints[i] = { ...this.endpoints[i]!, lease: { owner, until: now + ms } }
    return { ...this.endpoints[i] }
  }
  async update(id: string, patch: EndpointPatch, owner?: string): Promise<boolean> {
    const i = this.endpoints.findIndex((e) => e.id === id)
    if (i < 0 || (owner !== undefined && this.endpoints[i]!.lease?.owner !== owner)) return false
    this.endpoints[i] = patched(this.endpoints[i]!, patch)
    return true
  }
  async release(id: string, owner: string): Promise<void> {
    const e = this.endpoints.find((x) => x.id === id)
    if (e?.lease?.owner === owner) delete e.lease
  }
  async record(attempt: DeliveryAttempt): Promise<void> {
    this.log.push(attempt)
    const mine = this.log.filter((a) => a.endpointId === attempt.endpointId)
    if (mine.length > LOG_LIMIT) this.log.splice(this.log.indexOf(mine[0]!), 1)
  }
  async attempts(id: string, limit = LOG_LIMIT): Promise<DeliveryAttempt[]> {
    return this.log
      .filter((a) => a.endpointId === id)
      .reverse()
      .slice(0, limit)
  }
  async close(): Promise<void> {}
}
