/**
 * `marginalia export` / `import` move a whole store between a file and PostgreSQL:
 * the state, the recent-event window and the attachments arrive intact both ways; a target that
 * already holds a store, or a damaged export, is refused with nothing written. Attachments on a
 * PostgreSQL store live in its `blobs` table, so every server on the database serves them.
 */
import { expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openStore, type Store } from '../../../src/index.js'
import { storeImage } from '../../../src/store/blobs/index.js'
import { runCli } from '../../helpers/cli.js'
import { solidPng } from '../../helpers/png.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-transfer-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function schema(): string {
  const s = freshSchema()
  cleanups.push(() => dropSchema(s))
  return s
}

/** Run the built CLI to completion (bounded to 60 s), with no store from the environment. */
const cli = (args: string[], cwd: string) => runCli(args, cwd, {}, 60_000)

/** A store with sessions, annotations in several states, replies and an attachment. */
async function fill(store: Store, annotations: number): Promise<string> {
  const session = await store.createSession({ url: 'http://localhost:5173/orders' })
  const other = await store.createSession({ url: 'http://localhost:5173/settings' })
  const image = await storeImage(store.blobs, solidPng(4, 3, [200, 30, 30]))
  const first = await store.addAnnotation({ sessionId: session.id, comment: 'the button overlaps the footer', attachments: [{ id: 'att1', kind: 'screenshot', ...image }] })
  await store.acknowledge(first.id)
  await store.reply(first.id, { author: 'agent', message: 'fixed in Footer.tsx' })
  await store.resolve(first.id, { summary: 'moved the footer' })
  await Promise.all(Array.from({ length: annotations }, (_, i) => store.addAnnotation({ sessionId: i % 2 ? session.id : other.id, comment: `note ${i}` })))
  return image.sha256
}

/** What a user sees of a store: every annotation with its thread and status, and the rev. */
function view(store: Store): unknown {
  return { rev: store.rev, sessions: store.listSessions(), annotations: store.listAnnotations({}) }
}

const suite = await describePg('marginalia export / import')

suite('marginalia export / import', () => {
  it('moves a file store to PostgreSQL and back: same annotations, threads, rev, changes and attachments', async () => {
    const dir = tempDir()
    const file = path.join(dir, 'a', '.marginalia', 'store.json')
    const s = schema()
    const target = `${PG_URL}?schema=${s}`
    const source = await openStore({ file })
    const sha = await fill(source, 40)
    const before = view(source)
    const changes = source.changesSince(3)
    await source.close()

    const out = path.join(dir, 'inbox.jsonl')
    const exported = await cli(['export', '--store', file, '--out', out], dir)
    expect(exported.stderr).toMatch(/exported .*rev 46/)
    expect(exported.code).toBe(0)
    const lines = readFileSync(out, 'utf8').trim().split('\n')
    expect(JSON.parse(lines[0]!)).toMatchObject({ format: 'marginalia-export', version: 1, rev: 46, blobs: 1 })

    const imported = await cli(['import', '--in', out, '--store', target], dir)
    expect(imported.stderr).toMatch(/imported .*rev 46, \d+ event\(s\), 1 attachment/)
    expect(imported.code).toBe(0)

    const onPg = await openStore({ url: PG_URL, schema: s })
    cleanups.push(() => onPg.close())
    expect(view(onPg)).toEqual(before)
    expect(onPg.changesSince(3)).toEqual(changes)
    const blob = await onPg.blobs.get(sha)
    expect(blob?.mime).toBe('image/png')
    expect(Buffer.from(blob!.bytes).equals(solidPng(4, 3, [200, 30, 30]))).toBe(true)
    // The bytes are in the database, not in a directory beside some file.
    expect((await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s}".blobs`))[0]!.n).toBe('1')
    // And the store goes on from there: the next write is rev 47.
    const next = await onPg.addAnnotation({ sessionId: onPg.listSessions()[0]!.id, comment: 'after the move' })
    expect(onPg.rev).toBe(47)
    const afterMove = view(onPg)
    await onPg.close()

    // Back to a file, through stdout and stdin.
    const back = await cli(['export', '--store', target], dir)
    expect(back.code).toBe(0)
    const file2 = path.join(dir, 'b', '.marginalia', 'store.json')
    const dump = path.join(dir, 'from-pg.jsonl')
    writeFileSync(dump, back.stdout)
    const reimported = await cli(['import', '--in', dump, '--store', file2], dir)
    expect(reimported.code).toBe(0)
    const onFile = await openStore({ file: file2 })
    cleanups.push(() => onFile.close())
    expect(view(onFile)).toEqual(afterMove)
    expect(onFile.getAnnotation(next.id).comment).toBe('after the move')
    expect((await onFile.blobs.get(sha))?.mime).toBe('image/png')
  }, 90_000)

  it('refuses a target that already holds a store, and a damaged export, writing nothing', async () => {
    const dir = tempDir()
    const file = path.join(dir, '.marginalia', 'store.json')
    const source = await openStore({ file })
    await fill(source, 3)
    await source.close()
    const out = path.join(dir, 'x.jsonl')
    expect((await cli(['export', '--store', file, '--out', out], dir)).code).toBe(0)

    // Into the store it came from: refused, untouched.
    const bytes = readFileSync(file)
    const again = await cli(['import', '--in', out, '--store', file], dir)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/already holds a store.*import only into an empty store/)
    expect(readFileSync(file).equals(bytes)).toBe(true)

    // A PostgreSQL schema that holds a store: refused, nothing added.
    const s = schema()
    const target = `${PG_URL}?schema=${s}`
    const live = await openStore({ url: PG_URL, schema: s })
    await live.createSession({ url: 'http://localhost/' })
    await live.close()
    const busy = await cli(['import', '--in', out, '--store', target], dir)
    expect(busy.code).toBe(1)
    expect(busy.stderr).toMatch(/already holds a store \(rev 1\)/)
    expect((await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s}".events`))[0]!.n).toBe('1')
    expect((await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s}".blobs`))[0]!.n).toBe('0')

    // A damaged export: an event taken out of the middle (PostgreSQL keeps every event from rev 1). Refused by line, nothing written.
    const live2 = await openStore({ url: PG_URL, schema: s })
    const sid = live2.listSessions()[0]!.id
    for (let i = 0; i < 3; i++) await live2.addAnnotation({ sessionId: sid, comment: `pg ${i}` })
    await live2.close()
    const fromPg = await cli(['export', '--store', target], dir)
    expect(fromPg.code).toBe(0)
    const pgLines = fromPg.stdout.trim().split('\n')
    expect(pgLines.length).toBeGreaterThanOrEqual(5)
    expect(JSON.parse(pgLines[1]!)).toMatchObject({ rev: 1 })
    const damaged = path.join(dir, 'damaged.jsonl')
    writeFileSync(damaged, [pgLines[0], pgLines[1], ...pgLines.slice(3)].join('\n') + '\n')
    const s2 = schema()
    const bad = await cli(['import', '--in', damaged, '--store', `${PG_URL}?schema=${s2}`], dir)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/line 3: event rev 3, expected 2/)
    expect(await sql(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [s2])).toEqual([])
    const lines = readFileSync(out, 'utf8').trim().split('\n')

    // Cut off (the header promises more than there is).
    const cut = path.join(dir, 'cut.jsonl')
    writeFileSync(cut, lines.slice(0, -1).join('\n') + '\n')
    const short = await cli(['import', '--in', cut, '--store', path.join(dir, 'c', 'store.json')], dir)
    expect(short.code).toBe(1)
    expect(short.stderr).toMatch(/incomplete: the header promises/)

    // Not an export at all; and no --in.
    writeFileSync(path.join(dir, 'x.txt'), 'hello\n')
    expect((await cli(['import', '--in', path.join(dir, 'x.txt'), '--store', path.join(dir, 'd', 'store.json')], dir)).stderr).toMatch(/not JSON|not a Marginalia export/)
    const noIn = await cli(['import'], dir)
    expect(noIn.code).toBe(2)
    expect(noIn.stderr).toMatch(/--in is required/)
  }, 90_000)

  it('shows progress on stderr for a large store and keeps PostgreSQL history from rev 1', async () => {
    const dir = tempDir()
    const s = schema()
    const store = await openStore({ url: PG_URL, schema: s })
    const session = await store.createSession({ url: 'http://localhost/' })
    for (let i = 0; i < 6; i++) await Promise.all(Array.from({ length: 500 }, (_, j) => store.addAnnotation({ sessionId: session.id, comment: `n${i}-${j}` })))
    const rev = store.rev
    await store.close()
    const res = await cli(['export', '--store', `${PG_URL}?schema=${s}`, '--out', path.join(dir, 'big.jsonl')], dir)
    expect(res.code).toBe(0)
    // Not a terminal: a line per quarter, ending at 100 %.
    expect(res.stderr).toMatch(/marginalia: events 100% \(3 001\/3 001\)/)
    const lines = readFileSync(path.join(dir, 'big.jsonl'), 'utf8').trim().split('\n')
    expect(JSON.parse(lines[0]!)).toMatchObject({ rev, snapshotRev: null, events: rev })
    expect(JSON.parse(lines[1]!)).toMatchObject({ rev: 1, type: 'session.created' })
  }, 90_000)
})
