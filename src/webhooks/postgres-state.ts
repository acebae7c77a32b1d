/**
 * Webhook endpoints of a PostgreSQL store: two tables in the store's schema, created on first use
 * (under a transaction-level advisory lock, so servers starting together do not race):
 *
 *   <schema>.webhook_endpoints  (id text pk, rec jsonb, lease_owner text, lease_until bigint)
 *   <schema>.webhook_attempts   (seq bigserial pk, endpoint_id text, attempt jsonb)
 *
 * A lease is taken by one conditional UPDATE (free, ours, or expired by the database's clock), so
 * of several servers one delivers each endpoint's stream; a cursor moves only for the holder.
 */
import pg from 'pg'
import { LOG_LIMIT, type DeliveryAttempt, type EndpointPatch, type EndpointRecord, type WebhookState } from './state.js'

const SCHEMA_NAME = /^[A-Za-z][A-Za-z0-9_]*$/
const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint'

export class PostgresWebhookState implements WebhookState {
  readonly location: string
  private readonly pool: pg.Pool
  private readonly s: string
  private ready: Promise<void> | undefined

  constructor(url: string, schema?: string) {
    const u = new URL(url)
    const name = schema ?? u.searchParams.get('schema') ?? 'marginalia'
    if (!SCHEMA_NAME.test(name)) throw new Error(`schema: must be letters, digits and underscores, starting with a letter (got "${name.slice(0, 60)}")`)
    u.searchParams.delete('schema')
    this.s = `"${name}"`
    this.location = `${name}.webhook_endpoints`
    this.pool = new pg.Pool({ connectionString: u.toString(), max: 2, idleTimeoutMillis: 30_000 })
    // An idle client's error (the database restarted) must not end the process: the next query reconnects.
    this.pool.on('error', () => {})
  }

  private async q<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    this.ready ??= this.migrate().catch((e: unknown) => {
      this.ready = undefined
      throw e
    })
    await this.ready
    return this.pool.query<R>(sql, values)
  }

  private async migrate(): Promise<void> {
    const c = await this.pool.connect()
    try {
      await c.query('BEGIN')
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1), 2)', [this.s])
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${this.s}`)
      await c.query(`CREATE TABLE IF NOT EXISTS ${this.s}.webhook_endpoints (id text PRIMARY KEY, rec jsonb NOT NULL, lease_owner text, lease_until bigint)`)
      await c.query(`CREATE TABLE IF NOT EXISTS ${this.s}.webhook_attempts (seq bigserial PRIMARY KEY, endpoint_id text NOT NULL, attempt jsonb NOT NULL)`)
      await c.query(`CREATE INDEX IF NOT EXISTS webhook_attempts_endpoint ON ${this.s}.webhook_attempts (endpoint_id, seq)`)
      await c.query('COMMIT')
    } catch (e) {
      await c.query('ROLLBACK').catch(() => {})
      throw e
    } finally {
      c.release()
    }
  }

  async list(): Promise<EndpointRecord[]> {
    const res = await this.q<{ rec: EndpointRecord; lease_owner: string | null; lease_until: string | null }>(`SELECT rec, lease_owner, lease_until FROM ${this.s}.webhook_endpoints ORDER BY rec->>'createdAt', id`)
    return res.rows.map(withLease)
  }

  async add(endpoint: EndpointRecord): Promise<void> {
    const { lease: _lease, ...rec } = endpoint
    await this.q(`INSERT INTO ${this.s}.webhook_endpoints (id, rec) VALUES ($1, $2)`, [endpoint.id, rec])
  }

  async remove(id: string): Promise<boolean> {
    const res = await this.q(`DELETE FROM ${this.s}.webhook_endpoints WHERE id = $1`, [id])
    await this.q(`DELETE FROM ${this.s}.webhook_attempts WHERE endpoint_id = $1`, [id])
    return (res.rowCount ?? 0) > 0
  }

  async claim(id: string, owner: string, ms: number): Promise<EndpointRecord | null> {
    const res = await this.q<{ rec: EndpointRecord; lease_owner: string | null; lease_until: string | null }>(
      `UPDATE ${this.s}.webhook_endpoints SET lease_owner = $2, lease_until = ${NOW_MS} + $3
        WHERE id = $1 AND NOT (rec ? 'disabledAt') AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < ${NOW_MS})
        RETURNING rec, lease_owner, lease_until`,
      [id, owner, ms],
    )
    return res.rows[0] ? withLease(res.rows[0]) : null
  }

  async update(id: string, patch: EndpointPatch, owner?: string): Promise<boolean> {
    const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null && v !== undefined))
    const drop = Object.entries(patch)
      .filter(([, v]) => v === null)
      .map(([k]) => k)
    const res = await this.q(`UPDATE ${this.s}.webhook_endpoints SET rec = (rec - $3::text[]) || $2::jsonb WHERE id = $1 AND ($4::text IS NULL OR lease_owner = $4)`, [id, set, drop, owner ?? null])
    return (res.rowCount ?? 0) > 0
  }

  async release(id: string, owner: string): Promise<void> {
    await this.q(`UPDATE ${this.s}.webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`, [id, owner])
  }

  async record(attempt: DeliveryAttempt): Promise<void> {
    await this.q(`INSERT INTO ${this.s}.webhook_attempts (endpoint_id, attempt) VALUES ($1, $2)`, [attempt.endpointId, attempt])
    await this.q(
      `DELETE FROM ${this.s}.webhook_attempts WHERE endpoint_id = $1 AND seq < (SELECT min(seq) FROM (SELECT seq FROM ${this.s}.webhook_attempts WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2) newest)`,
      [attempt.endpointId, LOG_LIMIT],
    )
  }

  async attempts(id: string, limit = LOG_LIMIT): Promise<DeliveryAttempt[]> {
    const res = await this.q<{ attempt: DeliveryAttempt }>(`SELECT attempt FROM ${this.s}.webhook_attempts WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2`, [id, limit])
    return res.rows.map((r) => r.attempt)
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

function withLease(row: { rec: EndpointRecord; lease_owner: string | null; lease_until: string | null }): EndpointRecord {
  return row.lease_owner !== null && row.lease_until !== null ? { ...row.rec, lease: { owner: row.lease_owner, until: Number(row.lease_until) } } : { ...row.rec }
}
