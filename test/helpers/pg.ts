/**
 * The PostgreSQL the tests talk to: a real server (127.0.0.1:5432, database `test`, trust auth
 * on the project's machines; MARGINALIA_TEST_PG_URL elsewhere). Each test gets its own schema and
 * drops it afterwards. When the server is unreachable and we are not root (a developer's laptop),
 * the PostgreSQL tests are skipped with a message saying so; as root (CI) they fail instead.
 */
import pg from 'pg'
import { describe } from 'vitest'
import type { Cleanups } from './cleanup.js'
import { tempDir } from './store.js'

export const PG_URL = process.env.MARGINALIA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

let reachable: Promise<string | null> | null = null

/** null when the server answers, else why not. */
function pgUnavailable(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('SELECT 1')
      return null
    } catch (e) {
      return e instanceof Error ? e.message || String((e as { code?: string }).code) : String(e)
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return reachable
}

/**
 * `describe` when PostgreSQL is reachable; otherwise `describe.skip` with a message naming what
 * was skipped and why (not root), or a failing suite (root: CI never skips).
 */
export async function describePg(name: string): Promise<typeof describe | typeof describe.skip> {
  const reason = await pgUnavailable()
  if (reason === null) return describe
  if (process.getuid?.() === 0 && !process.env.MARGINALIA_SKIP_PG) {
    throw new Error(`PostgreSQL at ${PG_URL} is unreachable (${reason}); CI runs these tests: start it (.ci/run does) or set MARGINALIA_TEST_PG_URL.`)
  }
  console.warn(`SKIPPED "${name}": PostgreSQL at ${PG_URL} is unreachable (${reason}). Start PostgreSQL or set MARGINALIA_TEST_PG_URL to run them.`)
  return describe.skip
}

let counter = 0

/** A fresh schema name, unique across concurrent test processes. */
export function freshSchema(): string {
  return `t_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL })
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

/** One query on its own connection. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<T>(text, values)).rows
  } finally {
    await client.end()
  }
}

/**
 * What a test of `serve` processes on PostgreSQL starts from: a fresh schema (dropped afterwards),
 * the store URL naming it, and a temporary folder for the processes to run in (removed afterwards).
 */
export function schemaStore(cleanups: Cleanups): { schema: string; store: string; dir: string } {
  const schema = freshSchema()
  cleanups.push(() => dropSchema(schema))
  const t = tempDir()
  cleanups.push(t.cleanup)
  const url = new URL(PG_URL)
  url.searchParams.set('schema', schema)
  return { schema, store: url.toString(), dir: t.dir }
}
