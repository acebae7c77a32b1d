/**
 * PostgreSQL rows for `npm run bench`: persisted mutations/s with 10 000 annotations
 * and start-up (snapshot + replay) with 100 000, each in its own schema, dropped afterwards.
 * Skipped, with a line saying so, when PostgreSQL is unreachable.
 */
import pg from 'pg'
import { openStore } from '../src/index.js'
import { FileAdapter } from '../src/store/file/file-adapter.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { median, percentile, seedStore, tempDir } from './lib.js'
import { httpPoster, measureWake, startServe } from './serve-scenario.js'

const URL_ = process.env.MARGINALIA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
type Record_ = (scenario: string, metric: string, value: number, unit: string, goal?: { op: '<=' | '>='; limit: number }) => void

async function query(text: string, values: unknown[] = []): Promise<void> {
  const c = new pg.Client({ connectionString: URL_, connectionTimeoutMillis: 2000 })
  c.on('error', () => {})
  await c.connect()
  try {
    await c.query(text, values)
  } finally {
    await c.end()
  }
}

/**
 * A PostgreSQL schema holding a store of `n` annotations as the file store left it: its snapshot and
 * the events written after it (more than a PostgreSQL store ever keeps after its newest snapshot,
 * which it writes every 1 000 events).
 */
async function seedSchema(schema: string, n: number): Promise<{ ids: string[]; snapshotRev: number; replayed: number }> {
  const dir = tempDir()
  const { file, ids } = await seedStore(dir, n)
  const fileAdapter = new FileAdapter({ file, pollIntervalMs: 0, watchFiles: false })
  const loaded = await fileAdapter.load()
  await fileAdapter.dispose()
  const adapterStore = await openStore({ url: URL_, schema })
  await adapterStore.close()
  const snapshot = loaded.snapshot!
  await query(`INSERT INTO "${schema}".snapshots (rev, body) VALUES ($1, $2)`, [snapshot.rev, JSON.stringify(snapshot)])
  for (let i = 0; i < loaded.events.length; i += 5_000) {
    const chunk = loaded.events.slice(i, i + 5_000)
    await query(`INSERT INTO "${schema}".events (rev, event) SELECT * FROM unnest($1::bigint[], $2::jsonb[])`, [chunk.map((e) => e.rev), chunk.map((e) => JSON.stringify(e))])
  }
  return { ids, snapshotRev: snapshot.rev, replayed: loaded.events.filter((e) => e.rev > snapshot.rev).length }
}

export async function postgresBench(smoke: boolean, record: Record_): Promise<void> {
  try {
    await query('SELECT 1')
  } catch (e) {
    process.stderr.write(`  postgres: skipped, PostgreSQL at ${URL_} is unreachable (${e instanceof Error ? e.message : String(e)})\n`)
    return
  }
  const schema = `bench_${process.pid}`
  try {
    const n = smoke ? 200 : 10_000
    const { ids } = await seedSchema(schema, n)
    const store = await openStore({ url: URL_, schema })
    const seconds = smoke ? 0.3 : 3
    let done = 0
    const deadline = performance.now() + seconds * 1000
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: 256 }, async (_, w) => {
        for (let k = w; performance.now() < deadline; k += 256) {
          await store.reply(ids[(k * 7919) % ids.length]!, { author: 'agent', message: 'Looking into it' })
          done++
        }
      }),
    )
    record(`postgres writes, ${n.toLocaleString('en')} in store`, 'mutations/s', done / ((performance.now() - t0) / 1000), '/s', { op: '>=', limit: 2_000 })
    await store.close()
    await query(`DROP SCHEMA "${schema}" CASCADE`)

    const big = smoke ? 1_000 : 100_000
    const seeded = await seedSchema(schema, big)
    const times: number[] = []
    for (let i = 0; i < (smoke ? 1 : 5); i++) {
      const t = performance.now()
      const s = await openStore({ url: URL_, schema })
      times.push(performance.now() - t)
      await s.close()
      // The close saved a snapshot at the head: drop it, so every run replays the same events.
      await query(`DELETE FROM "${schema}".snapshots WHERE rev > $1`, [seeded.snapshotRev])
    }
    const label = `postgres start-up, ${big.toLocaleString('en')} annotations (replaying ${seeded.replayed.toLocaleString('en')} events)`
    record(label, 'snapshot + replay p50', median(times), 'ms', { op: '<=', limit: 2_000 })
    await query(`DROP SCHEMA "${schema}" CASCADE`)

    const wake = await wakeAcrossServes(schema, smoke ? 3 : 100)
    record('postgres wake, across two serve processes', 'p50', median(wake), 'ms', { op: '<=', limit: 10 })
    record('postgres wake, across two serve processes', 'p99', percentile(wake, 99), 'ms')
  } finally {
    await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
  }
}

/**
 * Two `marginalia serve` on one schema: an MCP client on A waits in watch_annotations, a REST POST
 * to B adds an annotation; the time from the POST to the watch's answer (LISTEN/NOTIFY between).
 */
async function wakeAcrossServes(schema: string, runs: number): Promise<number[]> {
  const store = `${URL_}?schema=${schema}`
  const a = await startServe(tempDir(), ['--store', store])
  const b = await startServe(tempDir(), ['--store', store])
  const client = new Client({ name: 'bench', version: '1.0.0' })
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`)))
    const post = httpPoster(b.url)
    const session = await post('/api/sessions', { url: 'http://localhost:5173/checkout' })
    return await measureWake(client, post, session.id, runs)
  } finally {
    await client.close().catch(() => {})
    a.child.kill('SIGTERM')
    b.child.kill('SIGTERM')
  }
}
