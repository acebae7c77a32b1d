/**
 * What the PostgreSQL adapter adds to the contract: a shared store across connections (every
 * store sees every event once, in rev order), migrations once, a newer schema refused untouched,
 * start-up from snapshot + replay, STORE_UNAVAILABLE when the server is away, and a LISTEN
 * connection killed by pg_terminate_backend re-established without a missed event.
 */
import { expect, it } from 'vitest'
import { openStore, type Store, type StoreEvent, type OpenStoreOptions } from '../../../src/index.js'
import { PostgresAdapter } from '../../../src/store/postgres/index.js'
import { migrate, LATEST_VERSION } from '../../../src/store/postgres/migrations.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

function schema(): string {
  const s = freshSchema()
  cleanups.push(() => dropSchema(s))
  return s
}

async function open(s: string, extra: OpenStoreOptions = {}): Promise<Store> {
  const store = await openStore({ url: PG_URL, schema: s, pollIntervalMs: 50, ...extra })
  cleanups.push(() => store.close().catch(() => {}))
  return store
}

const suite = await describePg('the PostgreSQL adapter')

suite('the PostgreSQL adapter', () => {
  it('two stores on one schema: each sees every event exactly once, in rev order, and writes never collide', async () => {
    const s = schema()
    const a = await open(s)
    const b = await open(s)
    const seenA: number[] = []
    const seenB: number[] = []
    a.changes$.subscribe((e: StoreEvent) => seenA.push(e.rev))
    b.changes$.subscribe((e: StoreEvent) => seenB.push(e.rev))
    const session = await a.createSession({ url: 'http://x/' })
    await until(() => b.rev === 1, 'the other store to see rev 1')
    const writes = []
    for (let i = 0; i < 60; i++) writes.push((i % 2 ? a : b).addAnnotation({ sessionId: session.id, comment: `c${i}` }))
    await Promise.all(writes)
    await until(() => a.rev === 61 && b.rev === 61, 'both stores at rev 61')
    const all = Array.from({ length: 61 }, (_, i) => i + 1)
    expect(seenA).toEqual(all)
    expect(seenB).toEqual(all)
    const revs = await sql<{ rev: string }>(`SELECT rev FROM "${s}".events ORDER BY rev`)
    expect(revs.map((r) => Number(r.rev))).toEqual(all)
  })

  it('CONFLICT with expectedRev holds across stores', async () => {
    const s = schema()
    const a = await open(s)
    const b = await open(s)
    const session = await a.createSession({ url: 'http://x/' })
    const ann = await a.addAnnotation({ sessionId: session.id, comment: 'c' })
    await b.reply(ann.id, { author: 'agent', message: 'from b' }) // b catches up inside its transaction
    await expect(a.acknowledge(ann.id, { expectedRev: ann.rev })).rejects.toMatchObject({ code: 'CONFLICT' })
  })

  it('start-up is the latest snapshot plus the events after it, and changesSince survives the restart', async () => {
    const s = schema()
    const first = await openStore({ adapter: new PostgresAdapter({ url: PG_URL, schema: s, snapshotEvery: 10 }) })
    const session = await first.createSession({ url: 'http://x/' })
    const ann = await first.addAnnotation({ sessionId: session.id, comment: 'c' })
    for (let i = 0; i < 24; i++) await first.reply(ann.id, { author: 'agent', message: `m${i}` })
    await first.close()
    const snaps = await sql<{ rev: string }>(`SELECT rev FROM "${s}".snapshots ORDER BY rev`)
    expect(snaps.length).toBeGreaterThan(0)
    const second = await open(s)
    expect(second.rev).toBe(26)
    expect(second.getAnnotation(ann.id)?.replies).toHaveLength(24)
    expect(second.changesSince(20).map((e) => e.rev)).toEqual([21, 22, 23, 24, 25, 26])
  })

  it('two processes starting together migrate once; a newer schema is refused untouched', async () => {
    const s = schema()
    const clients = await Promise.all([0, 1, 2].map(async () => {
      const { default: pg } = await import('pg')
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      return c
    }))
    try {
      const results = await Promise.all(clients.map((c) => migrate(c, s, 'test')))
      expect(results.filter((r) => r.from === 0 && r.to === LATEST_VERSION)).toHaveLength(1)
      expect(results.every((r) => r.to === LATEST_VERSION)).toBe(true)
    } finally {
      await Promise.all(clients.map((c) => c.end()))
    }
    await sql(`INSERT INTO "${s}".migrations (version) VALUES (99)`)
    await expect(openStore({ url: PG_URL, schema: s })).rejects.toThrow(/newer Marginalia \(schema version 99/)
    expect(await sql(`SELECT * FROM "${s}".events`)).toEqual([])
  })

  it('an unreachable server fails commands fast with STORE_UNAVAILABLE, naming the location without the password', async () => {
    const adapter = new PostgresAdapter({ url: 'postgres://u:s3cret@127.0.0.1:1/nowhere', connectTimeoutMs: 500 })
    const started = Date.now()
    const error = await adapter.load().then(() => null, (e: unknown) => e)
    expect(Date.now() - started).toBeLessThan(2000)
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect((error as Error).message).toContain('postgres://u@127.0.0.1:1/nowhere')
    expect((error as Error).message).not.toContain('s3cret')
    await adapter.dispose()
  })

  it('a LISTEN connection killed by pg_terminate_backend is re-established and no event is missed', async () => {
    const s = schema()
    const adapter = new PostgresAdapter({ url: PG_URL, schema: s, pollIntervalMs: 0, onError: () => {} })
    const watcher = await openStore({ adapter })
    cleanups.push(() => watcher.close())
    const writer = await open(s)
    await until(() => adapter.listening, 'the listener')
    const seen: number[] = []
    watcher.changes$.subscribe((e: StoreEvent) => seen.push(e.rev))
    const session = await writer.createSession({ url: 'http://x/' })
    await until(() => seen.length === 1, 'the first event')
    const pid = adapter.listenerPid
    await sql('SELECT pg_terminate_backend($1)', [pid])
    await until(() => !adapter.listening, 'the listener to drop')
    // Written while the watcher is not listening (and not polling: pollIntervalMs 0).
    await writer.addAnnotation({ sessionId: session.id, comment: 'while away' })
    await until(() => adapter.listening && adapter.listenerPid !== pid, 'a new listener connection')
    await until(() => seen.length === 2, 'the second event')
    await writer.addAnnotation({ sessionId: session.id, comment: 'after' })
    // (Not firstValueFrom on changes$: the event may already have been published by the time
    // the write's promise resumes this test, and a Subject does not replay it.)
    await until(() => seen.length === 3, 'the third event')
    expect(seen).toEqual([1, 2, 3])
  })
})
