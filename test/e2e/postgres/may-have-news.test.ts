/**
 * `mayHaveNews()` for the PostgreSQL adapter: strict by default (a write by another store is seen
 * by the next read: 100 write-on-B, read-on-A probes, none stale); with `readsTrustNotify`, reads
 * skip PostgreSQL while the LISTEN connection is up and no NOTIFY has arrived.
 */
import { expect, it } from 'vitest'
import { openStore, type Store } from '../../../src/index.js'
import { PostgresAdapter } from '../../../src/store/postgres/index.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const cleanups = useCleanups()

async function pair(readsTrustNotify = false): Promise<{ a: Store; b: Store; adapterA: PostgresAdapter; polls: () => number }> {
  const s = freshSchema()
  cleanups.push(() => dropSchema(s))
  const adapterA = new PostgresAdapter({ url: PG_URL, schema: s, pollIntervalMs: 0, readsTrustNotify, onError: () => {} })
  let count = 0
  const poll = adapterA.poll.bind(adapterA)
  adapterA.poll = () => {
    count++
    return poll()
  }
  const a = await openStore({ adapter: adapterA })
  cleanups.push(() => a.close())
  const b = await openStore({ adapter: new PostgresAdapter({ url: PG_URL, schema: s, pollIntervalMs: 0, onError: () => {} }) })
  cleanups.push(() => b.close())
  await until(() => adapterA.listening, 'the listener')
  return { a, b, adapterA, polls: () => count }
}

async function read(store: Store): Promise<void> {
  await store.catchUp()
}

const suite = await describePg('mayHaveNews on PostgreSQL')

suite('mayHaveNews on PostgreSQL', () => {
  it('with readsTrustNotify, reads with nothing new do not query PostgreSQL; a NOTIFY makes the store catch up', async () => {
    const { a, b, adapterA, polls } = await pair(true)
    const session = await b.createSession({ url: 'http://x/' })
    // The session's NOTIFY may arrive after a read that already cleared the flag: read until
    // the store has it and nothing is pending.
    for (let i = 0; i < 200 && (adapterA.mayHaveNews() || a.listSessions().length === 0); i++) await a.sync()
    expect(adapterA.mayHaveNews()).toBe(false)
    const before = polls()
    for (let i = 0; i < 50; i++) {
      expect(a.catchUp()).toBeUndefined()
    }
    expect(polls()).toBe(before)
    expect(a.listSessions()).toHaveLength(1)
    const written = await b.addAnnotation({ sessionId: session.id, comment: 'news' })
    // The NOTIFY marks news and the store catches up in the background (which clears the mark).
    await until(() => a.listAnnotations().some((x) => x.id === written.id), 'the write to reach the other store')
    await read(a)
    expect(a.getAnnotation(written.id).comment).toBe('news')
    expect(polls()).toBeGreaterThan(before)
  })

  // The default: strict. (With readsTrustNotify, in-process, all 100 were stale: the write
  // resolves before the NOTIFY reaches the other store.)
  it('by default, 100 write-on-B-then-read-on-A probes: none stale', async () => {
    const { a, b } = await pair()
    const session = await b.createSession({ url: 'http://x/' })
    let stale = 0
    for (let i = 0; i < 100; i++) {
      const written = await b.addAnnotation({ sessionId: session.id, comment: `probe ${i}` })
      await read(a)
      if (!a.listAnnotations().some((x) => x.id === written.id)) stale++
    }
    expect(stale).toBe(0)
  })

  it('with readsTrustNotify, while the LISTEN connection is down, every read asks PostgreSQL', async () => {
    const { a, b, adapterA } = await pair(true)
    const session = await b.createSession({ url: 'http://x/' })
    await read(a)
    const pid = adapterA.listenerPid
    await sql('SELECT pg_terminate_backend($1)', [pid])
    await until(() => !adapterA.listening, 'the listener to drop')
    expect(adapterA.mayHaveNews()).toBe(true)
    const written = await b.addAnnotation({ sessionId: session.id, comment: 'while away' })
    await read(a)
    expect(a.getAnnotation(written.id).comment).toBe('while away')
    await until(() => adapterA.listening && adapterA.listenerPid !== pid, 'a new listener connection')
  })
})
