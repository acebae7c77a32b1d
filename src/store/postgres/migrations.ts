/**
 * Versioned schema migrations, applied in one transaction under an advisory lock, so two
 * processes starting together migrate once (the second waits, then finds nothing to do). A
 * database migrated by a newer Marginalia is refused untouched.
 */
import type pg from 'pg'
import { StoreDataError } from '../errors.js'

/** Each entry is one version; never edit a released one, append a new one. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.events (
      rev bigint PRIMARY KEY CHECK (rev > 0),
      event jsonb NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE ${s}.snapshots (
      rev bigint PRIMARY KEY,
      state jsonb NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE ${s}.archive (
      id text PRIMARY KEY,
      annotation jsonb NOT NULL,
      archived_at timestamptz NOT NULL
    );`,
  // 2: attachment bytes, content-addressed (the blob store of a shared store).
  (s) => `
    CREATE TABLE ${s}.blobs (
      sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      mime text NOT NULL,
      bytes bytea NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now()
    );`,
  // 3: snapshots as JSON text (start-up reads one large value: jsonb costs a conversion to text on
  // every read and a parse into jsonb on every write; nothing queries inside a snapshot).
  (s) => `
    ALTER TABLE ${s}.snapshots ADD COLUMN body text;
    ALTER TABLE ${s}.snapshots ALTER COLUMN state DROP NOT NULL;`,
]

export const LATEST_VERSION = MIGRATIONS.length

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

export interface MigrateResult {
  from: number
  to: number
}

/** Bring `schema` to LATEST_VERSION. Safe to call from many processes at once. */
export async function migrate(client: pg.ClientBase, schema: string, location: string): Promise<MigrateResult> {
  const s = quoteIdent(schema)
  // Fast path without the lock: already current.
  const current = await readVersion(client, schema)
  if (current !== null && current === LATEST_VERSION) return { from: current, to: current }
  if (current !== null && current > LATEST_VERSION) throw newer(location, current)
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1), 2)', [schema])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
    const res = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.migrations`)
    const from = res.rows[0]?.v ?? 0
    if (from > LATEST_VERSION) throw newer(location, from)
    for (let v = from + 1; v <= LATEST_VERSION; v++) {
      await client.query(MIGRATIONS[v - 1]!(s))
      await client.query(`INSERT INTO ${s}.migrations (version) VALUES ($1)`, [v])
    }
    await client.query('COMMIT')
    return { from, to: LATEST_VERSION }
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {})
    throw e
  }
}

async function readVersion(client: pg.ClientBase, schema: string): Promise<number | null> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [`${quoteIdent(schema)}.migrations`])
  if (!exists.rows[0]?.t) return null
  const res = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${quoteIdent(schema)}.migrations`)
  return res.rows[0]?.v ?? 0
}

function newer(location: string, version: number): StoreDataError {
  return new StoreDataError(
    location,
    `the schema was written by a newer Marginalia (schema version ${version}; this one knows up to ${LATEST_VERSION}). Nothing was changed: upgrade Marginalia, or use another schema`,
  )
}
