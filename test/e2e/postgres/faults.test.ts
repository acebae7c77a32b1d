/**
 * The database going away, without touching the shared server: the store talks to PostgreSQL
 * through a TCP proxy the test cuts and restores. Commands fail fast with STORE_UNAVAILABLE
 * (REST 503 + Retry-After), the store stays open, reconnects and catches up on what others
 * wrote meanwhile; nothing acknowledged is lost. And a writer killed mid-transaction leaves no
 * partial event and no gap.
 */
import { expect, it } from 'vitest'
import net from 'node:net'
import { once } from 'node:events'
import { spawn } from 'node:child_process'
import { openStore, StoreUnavailableError, type StoreEvent } from '../../../src/index.js'
import { toErrorResponse } from '../../../src/http/respond.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

/** A loopback proxy to the PostgreSQL server that can be cut (every connection dropped, port closed) and restored on the same port. */
async function proxy(): Promise<{ port: number; cut: () => Promise<void>; restore: () => Promise<void> }> {
  const target = new URL(PG_URL)
  const sockets = new Set<net.Socket>()
  let server: net.Server
  const listen = async (port: number) => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on('error', () => {})
        s.on('close', () => sockets.delete(s))
      }
      client.pipe(upstream).pipe(client)
    })
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
    return (server.address() as net.AddressInfo).port
  }
  const port = await listen(0)
  const cut = async () => {
    await new Promise<void>((r) => {
      server.close(() => r())
      for (const s of sockets) s.destroy()
    })
  }
  cleanups.push(cut)
  return { port, cut, restore: async () => void (await listen(port)) }
}

const suite = await describePg('PostgreSQL faults')

suite('PostgreSQL faults', () => {
  it('STORE_UNAVAILABLE is REST 503 with Retry-After, and names no secret', () => {
    const r = toErrorResponse(new StoreUnavailableError('postgres://u@h/db (schema marginalia)', 'connect ECONNREFUSED', 2), () => {})
    expect(r.status).toBe(503)
    expect(r.headers['Retry-After']).toBe('2')
    expect(r.body.error.code).toBe('STORE_UNAVAILABLE')
  })

  it('the database going away: commands fail fast, the store stays up, reconnects and catches up; nothing acknowledged is lost', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const p = await proxy()
    const viaProxy = new URL(PG_URL)
    viaProxy.port = String(p.port)
    const store = await openStore({ url: viaProxy.toString(), schema, pollIntervalMs: 50, onError: () => {} })
    cleanups.push(() => store.close().catch(() => {}))
    const other = await openStore({ url: PG_URL, schema })
    cleanups.push(() => other.close())
    const seen: number[] = []
    store.changes$.subscribe((e: StoreEvent) => seen.push(e.rev))
    const session = await store.createSession({ url: 'http://x/' })
    const acked = [await store.addAnnotation({ sessionId: session.id, comment: 'before' })]

    await p.cut()
    const started = Date.now()
    const error = await store.addAnnotation({ sessionId: session.id, comment: 'while away' }).then(() => null, (e: unknown) => e)
    expect(Date.now() - started).toBeLessThan(3000)
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((error as Error).message).toMatch(/unavailable .*nothing was written/)
    // Others keep writing while this store cannot reach the database.
    await other.addAnnotation({ sessionId: session.id, comment: 'written elsewhere meanwhile' })

    await p.restore()
    acked.push(await store.addAnnotation({ sessionId: session.id, comment: 'after' }))
    await until(() => seen.length === 4, 'the four events')
    expect(seen).toEqual([1, 2, 3, 4])
    const rows = await sql<{ event: { type: string; rev: number } }>(`SELECT event FROM "${schema}".events ORDER BY rev`)
    expect(rows.map((r) => r.event.rev)).toEqual([1, 2, 3, 4])
    for (const a of acked) expect(other.getAnnotation(a.id) ?? (await other.sync(), other.getAnnotation(a.id))).toBeDefined()
  })

  it('a writer killed (SIGKILL) mid-transaction × 5: no partial event, no gap, the lock is released', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const store = await openStore({ url: PG_URL, schema })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://x/' })
    const script = `
      import pg from 'pg'
      const c = new pg.Client({ connectionString: process.argv[1] })
      await c.connect()
      await c.query('BEGIN')
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1), 1)', [process.argv[2]])
      await c.query('INSERT INTO "' + process.argv[2] + '".events (rev, event) VALUES ($1, $2)', [process.argv[3], JSON.stringify({ rev: Number(process.argv[3]), type: 'partial' })])
      process.stdout.write('inside\\n')
      await new Promise(() => {})`
    for (let i = 0; i < 5; i++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, PG_URL, schema, String(store.rev + 1)], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() })
      cleanups.push(() => child.kill('SIGKILL'))
      await once(child.stdout, 'data')
      child.kill('SIGKILL')
      await once(child, 'exit')
      // The killed writer's transaction is rolled back and its lock released: the next write gets the rev.
      await store.addAnnotation({ sessionId: session.id, comment: `after kill ${i}` })
    }
    const rows = await sql<{ event: { type: string; rev: number } }>(`SELECT event FROM "${schema}".events ORDER BY rev`)
    expect(rows.map((r) => r.event.rev)).toEqual([1, 2, 3, 4, 5, 6])
    expect(rows.some((r) => r.event.type === 'partial')).toBe(false)
  })

  it('pool connections killed by pg_terminate_backend under a write load: every acknowledged write is kept, no gap, the store goes on', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const app = `mg_kill_${process.pid}_${Date.now() % 100000}`
    const url = new URL(PG_URL)
    url.searchParams.set('application_name', app)
    const store = await openStore({ url: url.toString(), schema, pollIntervalMs: 50, onError: () => {} })
    cleanups.push(() => store.close().catch(() => {}))
    const session = await store.createSession({ url: 'http://x/' })
    const acked: string[] = []
    const failures: unknown[] = []
    let killed = 0
    // Four rounds: 50 concurrent writes, and while they run every backend of this store is terminated.
    for (let round = 0; round < 4; round++) {
      const writes = Array.from({ length: 50 }, (_, i) =>
        store.addAnnotation({ sessionId: session.id, comment: `r${round} w${i}` }).then(
          (a) => void acked.push(a.id),
          (e: unknown) => void failures.push(e),
        ),
      )
      const rows = await sql<{ n: number }>(`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, [app])
      killed += rows[0]!.n
      await Promise.all(writes)
    }
    expect(killed).toBeGreaterThan(0)
    // A failure is STORE_UNAVAILABLE (the connection died), never anything else.
    for (const f of failures) expect(f).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    // The store goes on without a restart.
    const last = await store.addAnnotation({ sessionId: session.id, comment: 'after the kills' })
    acked.push(last.id)
    const events = await sql<{ rev: string; event: { annotationId?: string } }>(`SELECT rev, event FROM "${schema}".events ORDER BY rev`)
    expect(events.map((r) => Number(r.rev))).toEqual(events.map((_, i) => i + 1))
    const written = new Set(events.map((r) => r.event.annotationId))
    for (const id of acked) expect(written.has(id)).toBe(true)
    // This store and a fresh one agree on everything (a write whose COMMIT went through but whose
    // answer was lost with the connection shows up in both, as the table has it).
    const fresh = await openStore({ url: PG_URL, schema })
    cleanups.push(() => fresh.close())
    await store.sync()
    expect(store.rev).toBe(events.length)
    expect(fresh.listAnnotations({}).map((a) => a.id)).toEqual(store.listAnnotations({}).map((a) => a.id))
  }, 60_000)
})
