/**
 * The shared store: events in PostgreSQL, so several `marginalia serve` / `mcp` processes on
 * several machines use one inbox.
 *
 *   <schema>.migrations  (version, applied_at)          versioned, applied under an advisory lock
 *   <schema>.events      (rev bigint pk, event jsonb, at) append-only, consecutive revs
 *   <schema>.snapshots   (rev bigint pk, body text (JSON), at) every `snapshotEvery` events
 *                        (`state jsonb` holds those written before schema version 3)
 *   <schema>.archive     (id text pk, annotation jsonb, archived_at)
 *
 * A write: BEGIN, pg_advisory_xact_lock (one writer at a time across every process), read the
 * events after this process's last rev, let the store decide, INSERT its events, pg_notify the
 * new head rev on the schema's channel, COMMIT. Readers never take the lock: a writer commits
 * before the next one takes the lock, so a reader never sees rev n+1 without rev n.
 *
 * Other processes' writes arrive through LISTEN on a dedicated connection; while it is down the
 * adapter polls and reconnects with backoff, asking the store to catch up once it is back.
 */
import pg from 'pg'
import type { StoreEvent } from '../events.js'
import { DEFAULT_POLL_INTERVAL_MS, snapshotOf, type Decision, type LoadResult, type Snapshot, type StoreAdapter, type StoreView } from '../persistence.js'
import { StoreDataError, StoreUnavailableError, ValidationError } from '../errors.js'
import type { ArchiveSink } from '../archive.js'
import { DirectoryArchive } from '../archive/directory.js'
import { migrate, quoteIdent } from './migrations.js'
import { isUnavailable, describePg, redactUrl } from './connection.js'
import { PostgresBlobStore } from './postgres-blob-store.js'
import { Listener } from './listener.js'
import type { BlobStore } from '../blobs/blob-store.js'
import type { Progress, RestoreInput } from '../persistence.js'

const DEFAULT_SCHEMA = 'marginalia'
const DEFAULT_SNAPSHOT_EVERY = 1000

export interface PostgresAdapterOptions {
  /** Connection URL, `postgres://user:password@host:5432/database`. */
  url: string
  /** Schema the tables live in (default: the URL's `?schema=`, else `marginalia`): letters, digits, underscore. */
  schema?: string
  /** Save a snapshot every this many events (default 1000). */
  snapshotEvery?: number
  /** Poll for other processes' writes while LISTEN is down, in ms (default 500; 0 = off). */
  pollIntervalMs?: number
  /** Connections in the pool (default 4; the LISTEN connection is extra). */
  poolSize?: number
  /** Give up connecting after this long, so commands fail fast with STORE_UNAVAILABLE (ms, default 2000). */
  connectTimeoutMs?: number
  /**
   * Let reads skip PostgreSQL while the LISTEN connection is up and no NOTIFY has arrived since
   * the last read (default false). Cheaper reads, but a read can miss another process's write
   * that committed before its NOTIFY reached this process (in-process tests see it every time),
   * so the default keeps read-after-write strict: one indexed query before each read.
   */
  readsTrustNotify?: boolean
  /** Where problems that do not fail a command go (a lost LISTEN connection, a failed snapshot). */
  onError?: (error: unknown) => void
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/

export class PostgresAdapter implements StoreAdapter {
  readonly location: string
  readonly schema: string
  private readonly pool: pg.Pool
  private readonly url: string
  private readonly q: { events: string; snapshots: string; archive: string; blobs: string }
  private readonly channel: string
  private readonly snapshotEvery: number
  private readonly pollIntervalMs: number
  private readonly connectTimeoutMs: number
  private readonly onError: (error: unknown) => void
  private readonly readsTrustNotify: boolean
  /** Rev of the last event this process has seen. */
  private lastRev = 0
  /** Rev of the newest snapshot this process knows of. */
  private snapshotRev = 0
  private migrated: Promise<void> | null = null
  private listener: Listener | null = null
  private closed = false
  /**
   * Something may have been written elsewhere since the last read: set by every NOTIFY (and by
   * the listener's connect and polling), cleared right before a read is sent. While the LISTEN
   * connection is down, `mayHaveNews` is always true (the store reads before every query).
   */
  private dirty = true

  constructor(options: PostgresAdapterOptions) {
    const schema = options.schema ?? schemaFromUrl(options.url) ?? DEFAULT_SCHEMA
    if (!SCHEMA_NAME.test(schema)) {
      throw new ValidationError([{ path: 'schema', message: `must be letters, digits and underscores, starting with a letter (got "${schema.slice(0, 60)}")` }])
    }
    this.url = withoutSchemaParam(options.url)
    this.schema = schema
    this.location = `${redactUrl(options.url)} (schema ${schema})`
    this.snapshotEvery = Math.max(1, options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY)
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2000
    this.readsTrustNotify = options.readsTrustNotify ?? false
    this.onError = options.onError ?? ((e) => console.error(`marginalia: ${describePg(e)}`))
    const s = quoteIdent(schema)
    this.q = { events: `${s}.events`, snapshots: `${s}.snapshots`, archive: `${s}.archive`, blobs: `${s}.blobs` }
    this.channel = `marginalia_${schema}`.toLowerCase()
    this.pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 4, connectionTimeoutMillis: this.connectTimeoutMs, idleTimeoutMillis: 30_000 })
    // An idle connection the server dropped: the pool discards it; the next query reconnects.
    this.pool.on('error', () => {})
    // Every connection keeps a listener for its whole life: a server that terminates it (a restart,
    // pg_terminate_backend) sends an error message that may arrive between the pool's listener and
    // run()'s (or after both let go); unheard, it would end the process. What it means reaches the
    // caller anyway: the query in flight rejects, and a dead connection is never reused.
    this.pool.on('connect', (client) => client.on('error', () => {}))
  }

  /** Create or migrate the schema once per adapter (under an advisory lock across processes). */
  ensureSchema(): Promise<void> {
    if (!this.migrated) {
      const migrating = this.run((c) => migrate(c, this.schema, this.location)).then(() => undefined)
      this.migrated = migrating
      migrating.catch(() => {
        if (this.migrated === migrating) this.migrated = null
      })
    }
    return this.migrated
  }

  /** Apply the migrations now (the `migrate` command); says from which version to which. */
  async migrate(): Promise<{ from: number; to: number }> {
    const result = await this.run((c) => migrate(c, this.schema, this.location))
    this.migrated = Promise.resolve()
    return result
  }

  async load(): Promise<LoadResult> {
    await this.ensureSchema()
    return this.run(async (c) => {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      try {
        const snapshot = await this.newestSnapshot(c)
        this.snapshotRev = snapshot?.rev ?? 0
        this.lastRev = this.snapshotRev
        const events = await this.readAfter(c, this.lastRev)
        await c.query('COMMIT')
        return { snapshot, events }
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {})
        throw e
      }
    })
  }

  /** Read the newest snapshot and the events after it again (recovery after a refused event). */
  reload(): Promise<LoadResult> {
    return this.load()
  }

  async transact(decide: (external: StoreEvent[]) => Promise<Decision>): Promise<void> {
    if (!this.migrated) await this.ensureSchema()
    await this.run(async (c) => {
      await c.query('BEGIN')
      let decision: Decision
      try {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1), 1)', [this.schema])
        const external = await this.readAfter(c, this.lastRev)
        decision = await decide(external)
        const events = decision.events
        if (events.length > 0) {
          if (events[0]!.rev !== this.lastRev + 1) throw new StoreDataError(this.location, `the store decided rev ${events[0]!.rev} after rev ${this.lastRev}`)
          await c.query(`INSERT INTO ${this.q.events} (rev, event, at) SELECT * FROM unnest($1::bigint[], $2::jsonb[], $3::timestamptz[])`, [
            events.map((e) => e.rev),
            events.map((e) => JSON.stringify(e)),
            events.map((e) => e.at),
          ])
          await c.query('SELECT pg_notify($1, $2)', [this.channel, String(events[events.length - 1]!.rev)])
        }
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {})
        throw e
      }
      await c.query('COMMIT')
      const events = decision.events
      if (events.length === 0) return
      this.lastRev = events[events.length - 1]!.rev
      if (this.lastRev - this.snapshotRev >= this.snapshotEvery) this.saveSnapshot(snapshotOf(decision))
    })
  }

  async poll(): Promise<StoreEvent[]> {
    if (!this.migrated) await this.ensureSchema()
    // Cleared before the query goes out: a NOTIFY that arrives while it runs sets it again.
    this.dirty = false
    try {
      return await this.run((c) => this.readAfter(c, this.lastRev))
    } catch (e) {
      this.dirty = true
      throw e
    }
  }

  /**
   * Whether another process may have written since our last read. Strict by default (always
   * true: the store reads the events after our rev, one indexed query, before each read). With
   * `readsTrustNotify`: false while the LISTEN connection is up and no NOTIFY has arrived since
   * the last read, so reads cost no round trip but may lag a write by the NOTIFY's delivery time.
   */
  mayHaveNews(): boolean {
    return !this.readsTrustNotify || this.dirty || !this.listening || this.listener === null
  }

  /** Read-after-write: read the head rev and catch up (the same as a poll here: no lock needed). */
  sync(): Promise<StoreEvent[]> {
    return this.poll()
  }

  /** The newest rev in the database (for health checks and tests). */
  async headRev(): Promise<number> {
    await this.ensureSchema()
    return this.run(async (c) => Number((await c.query<{ rev: string | null }>(`SELECT max(rev) AS rev FROM ${this.q.events}`)).rows[0]?.rev ?? 0))
  }

  watch(onChange: () => void): () => void {
    this.listener?.stop()
    const listener = new Listener({
      url: this.url,
      channel: this.channel,
      pollIntervalMs: this.pollIntervalMs,
      connectTimeoutMs: this.connectTimeoutMs,
      isNew: (rev) => {
        const isNew = rev > this.lastRev
        if (isNew) this.dirty = true
        return isNew
      },
      onChange: () => {
        this.dirty = true
        onChange()
      },
      onError: this.onError,
      location: this.location,
    })
    this.listener = listener
    listener.start()
    return () => listener.stop()
  }

  /** True while the LISTEN connection is up (tests and /health). */
  get listening(): boolean {
    return this.listener?.listening ?? false
  }

  /** The LISTEN connection's backend pid, for fault tests (pg_terminate_backend). */
  get listenerPid(): number | undefined {
    return this.listener?.pid
  }

  async close(final: StoreView): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.listener?.stop()
    try {
      const rev = final.state.rev
      if (this.migrated && rev > this.snapshotRev && rev === this.lastRev && rev - this.snapshotRev >= Math.min(this.snapshotEvery, 100)) {
        await this.writeSnapshot(snapshotOf(final)).catch((e: unknown) => this.onError(e))
      }
      await this.pending
    } finally {
      await this.pool.end().catch(() => {})
    }
  }

  async dispose(): Promise<void> {
    this.closed = true
    this.listener?.stop()
    await this.pool.end().catch(() => {})
  }

  archive(place: string | undefined): ArchiveSink {
    if (place !== undefined) return new DirectoryArchive(place)
    return {
      keep: async (at, annotations) => {
        const res = await this.run((c) =>
          c.query(`INSERT INTO ${this.q.archive} (id, annotation, archived_at) SELECT * FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[]) ON CONFLICT (id) DO NOTHING`, [
            annotations.map((a) => a.id),
            annotations.map((a) => JSON.stringify(a)),
            annotations.map(() => at),
          ]),
        )
        return { place: `${this.schema}.archive`, written: res.rowCount ?? 0 }
      },
    }
  }

  /** Attachment bytes in this schema's `blobs` table, through this adapter's pool. */
  blobStore(): BlobStore {
    return new PostgresBlobStore(`${this.location} blobs`, this.q.blobs, (work) => this.run(work), () => this.ensureSchema())
  }

  /**
   * The whole history for export: every event from rev 1 when the table still starts there (it
   * does unless the store was imported from a snapshot), else the newest snapshot and the events
   * after it. Read in pages inside one REPEATABLE READ transaction, so writers may go on.
   */
  async history(progress?: Progress): Promise<LoadResult> {
    await this.ensureSchema()
    return this.run(async (c) => {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      try {
        const range = await c.query<{ lo: string | null; hi: string | null }>(`SELECT min(rev) AS lo, max(rev) AS hi FROM ${this.q.events}`)
        const lo = Number(range.rows[0]?.lo ?? 0)
        const hi = Number(range.rows[0]?.hi ?? 0)
        let snapshot: Snapshot | null = null
        let after = 0
        if (lo !== 1) {
          snapshot = await this.newestSnapshot(c)
          after = snapshot?.rev ?? 0
        }
        const events: StoreEvent[] = []
        const total = Math.max(0, hi - after)
        for (;;) {
          const page = await c.query<{ event: StoreEvent }>(`SELECT event FROM ${this.q.events} WHERE rev > $1 ORDER BY rev LIMIT 5000`, [after])
          if (page.rows.length === 0) break
          for (const row of page.rows) events.push(row.event)
          after = events[events.length - 1]!.rev
          progress?.(events.length, total)
        }
        await c.query('COMMIT')
        return { snapshot, events }
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {})
        throw e
      }
    })
  }

  /**
   * Import into an empty schema, in one transaction under the writers' lock: the exported
   * snapshot (if any), every exported event, and a snapshot of the head so start-up is fast.
   */
  async restore(input: RestoreInput, progress?: Progress): Promise<void> {
    await this.ensureSchema()
    const { base, head } = input
    await this.run(async (c) => {
      await c.query('BEGIN')
      try {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1), 1)', [this.schema])
        const held = await c.query<{ rev: string | null }>(`SELECT greatest((SELECT max(rev) FROM ${this.q.events}), (SELECT max(rev) FROM ${this.q.snapshots})) AS rev`)
        const rev = Number(held.rows[0]?.rev ?? 0)
        if (rev > 0) throw new StoreDataError(this.location, `already holds a store (rev ${rev}); import only into an empty store: name another schema (?schema=name) or database. Nothing was written`)
        await input.beforeWrite?.()
        if (base.snapshot && base.snapshot.rev > 0) await c.query(`INSERT INTO ${this.q.snapshots} (rev, body) VALUES ($1, $2)`, [base.snapshot.rev, JSON.stringify(base.snapshot)])
        const events = base.events
        for (let i = 0; i < events.length; i += 2000) {
          const chunk = events.slice(i, i + 2000)
          await c.query(`INSERT INTO ${this.q.events} (rev, event, at) SELECT * FROM unnest($1::bigint[], $2::jsonb[], $3::timestamptz[])`, [
            chunk.map((e) => e.rev),
            chunk.map((e) => JSON.stringify(e)),
            chunk.map((e) => e.at),
          ])
          progress?.(i + chunk.length, events.length)
        }
        if (head.rev > (base.snapshot?.rev ?? 0) && events.length > 0) {
          await c.query(`INSERT INTO ${this.q.snapshots} (rev, body) VALUES ($1, $2) ON CONFLICT (rev) DO NOTHING`, [head.rev, JSON.stringify(head)])
        }
        if (head.rev > 0) await c.query('SELECT pg_notify($1, $2)', [this.channel, String(head.rev)])
        await c.query('COMMIT')
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {})
        throw e
      }
    })
  }

  // ---- internals ------------------------------------------------------------------------------

  private pending: Promise<void> = Promise.resolve()

  /** After the commit, outside the lock: a failed snapshot loses nothing (the events have it all). */
  private saveSnapshot(snapshot: Snapshot): void {
    this.snapshotRev = snapshot.rev
    this.pending = this.pending.then(() => this.writeSnapshot(snapshot)).catch((e: unknown) => this.onError(e))
  }

  private async writeSnapshot(snapshot: Snapshot): Promise<void> {
    await this.run(async (c) => {
      await c.query(`INSERT INTO ${this.q.snapshots} (rev, body) VALUES ($1, $2) ON CONFLICT (rev) DO NOTHING`, [snapshot.rev, JSON.stringify(snapshot)])
      // Keep the last few snapshots only: start-up needs the newest.
      await c.query(`DELETE FROM ${this.q.snapshots} WHERE rev < (SELECT min(rev) FROM (SELECT rev FROM ${this.q.snapshots} ORDER BY rev DESC LIMIT 3) AS kept)`)
    })
    this.snapshotRev = Math.max(this.snapshotRev, snapshot.rev)
  }

  /** The newest snapshot, or null (JSON text since schema version 3; jsonb before). */
  private async newestSnapshot(c: pg.PoolClient): Promise<Snapshot | null> {
    const res = await c.query<{ body: string | null; state: Snapshot | null }>(`SELECT body, CASE WHEN body IS NULL THEN state END AS state FROM ${this.q.snapshots} ORDER BY rev DESC LIMIT 1`)
    const row = res.rows[0]
    if (!row) return null
    if (row.body !== null) {
      try {
        return JSON.parse(row.body) as Snapshot
      } catch (e) {
        throw new StoreDataError(this.location, `the newest snapshot is not valid JSON (${e instanceof Error ? e.message : String(e)})`)
      }
    }
    return row.state
  }

  private async readAfter(c: pg.PoolClient, after: number): Promise<StoreEvent[]> {
    const res = await c.query<{ event: StoreEvent }>(`SELECT event FROM ${this.q.events} WHERE rev > $1 ORDER BY rev`, [after])
    const events = res.rows.map((r) => r.event)
    for (let i = 0; i < events.length; i++) {
      if (events[i]!.rev !== after + 1 + i) throw new StoreDataError(this.location, `event rev ${events[i]!.rev} follows rev ${i === 0 ? after : events[i - 1]!.rev}: a gap in the events table`)
    }
    if (events.length > 0) this.lastRev = events[events.length - 1]!.rev
    return events
  }

  /** Run with a pooled connection; connection failures become STORE_UNAVAILABLE. */
  private async run<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (e) {
      throw new StoreUnavailableError(this.location, describePg(e), 1, { cause: e })
    }
    let broken = false
    // A connection that dies while checked out also emits 'error' on the client (the query in
    // flight rejects with it too): without a listener that would crash the process.
    const onClientError = (): void => {
      broken = true
    }
    client.on('error', onClientError)
    try {
      return await work(client)
    } catch (e) {
      if (isUnavailable(e)) {
        broken = true
        throw new StoreUnavailableError(this.location, describePg(e), 1, { cause: e })
      }
      throw e
    } finally {
      client.off('error', onClientError)
      client.release(broken)
    }
  }
}

/** `postgres://…/db?schema=name` names the schema in the URL (for --store and DATABASE_URL). */
function schemaFromUrl(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get('schema') ?? undefined
  } catch {
    return undefined
  }
}

function withoutSchemaParam(url: string): string {
  try {
    const u = new URL(url)
    if (!u.searchParams.has('schema')) return url
    u.searchParams.delete('schema')
    return u.toString()
  } catch {
    return url
  }
}
