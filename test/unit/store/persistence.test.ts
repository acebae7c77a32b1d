import { describe, expect, it } from 'vitest'
import { existsSync, readFileSync, writeFileSync, mkdirSync, appendFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { firstValueFrom, filter, take, toArray } from 'rxjs'
import { openStore, StoreFileError, type Store, type StoreEvent, type OpenStoreOptions } from '../../../src/index.js'
import { deterministic, tempDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

function setup() {
  const t = tempDir()
  cleanups.push(t.cleanup)
  return t
}

async function open(file: string, extra: OpenStoreOptions = {}): Promise<Store> {
  const store = await openStore({ file, pollIntervalMs: 50, ...deterministic(), ...extra })
  cleanups.push(() => store.close())
  return store
}

function logOf(file: string) {
  return path.join(path.dirname(file), 'store.events.jsonl')
}

async function fill(store: Store) {
  const s = await store.createSession({ url: 'http://localhost:5173/', name: 'home' })
  const a = await store.addAnnotation({ sessionId: s.id, comment: 'Header wraps on mobile', element: { selector: 'header h1', rect: { x: 1, y: 2, width: 300, height: 40 } } })
  const b = await store.addAnnotation({ sessionId: s.id, comment: 'Wrong colour — ünïcødé ✓' })
  await store.acknowledge(a.id, { message: 'Looking' })
  await store.resolve(a.id, { summary: 'Fixed in header.css' })
  await store.reply(b.id, { author: 'human', message: 'Use the brand blue' })
  return { s, a, b }
}

describe('file persistence', () => {
  it('writes nothing until the first mutation, then creates the directory and the file', async () => {
    const { dir, file } = setup()
    const store = await open(file)
    expect(existsSync(path.join(dir, '.marginalia'))).toBe(false)
    await store.createSession({ url: 'http://x/' })
    expect(existsSync(file)).toBe(true)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'marginalia-store', version: 1 })
  })

  it('round-trips everything through close and reopen', async () => {
    const { file } = setup()
    const first = await open(file)
    const { s } = await fill(first)
    const before = first.getSession(s.id)
    const rev = first.rev
    await first.close()
    const second = await open(file)
    expect(second.rev).toBe(rev)
    expect(second.getSession(s.id)).toEqual(before)
    expect(second.getAllPending().map((a) => a.comment)).toEqual(['Wrong colour — ünïcødé ✓'])
  })

  it('a resolved mutation is on disk before close (another instance reads it)', async () => {
    const { file } = setup()
    const writer = await open(file)
    await fill(writer)
    const reader = await open(file)
    expect(reader.rev).toBe(writer.rev)
    expect(reader.listSessions()).toEqual(writer.listSessions())
  })

  it('changesSince works after a restart, and the window survives it', async () => {
    const { file } = setup()
    const first = await open(file, { compactMinBytes: 2_000 })
    const { a } = await fill(first)
    for (let i = 0; i < 1_200; i++) await first.reply(a.id, { author: 'agent', message: `note ${i}` })
    const expected = first.changesSince(first.rev - 1_000)
    const oldest = first.oldestAvailableRev
    await first.close()
    const second = await open(file)
    expect(second.changesSince(second.rev - 1_000)).toEqual(expected)
    expect(second.oldestAvailableRev).toBeLessThanOrEqual(second.rev - 1_000)
    expect(second.oldestAvailableRev).toBeGreaterThanOrEqual(oldest)
    expect(() => second.changesSince(0)).toThrow(/oldest event still kept is rev/)
  })

  it('refuses a corrupt file with an error naming it, and leaves it untouched', async () => {
    const { file } = setup()
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, '{"format":"marginalia-store","version":1,"rev":')
    const bytes = readFileSync(file)
    const error = await openStore({ file }).then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(StoreFileError)
    expect((error as Error).message).toContain(path.resolve(file))
    expect((error as Error).message).toMatch(/not valid JSON/)
    expect(readFileSync(file)).toEqual(bytes)
  })

  it('refuses a file written by a newer version, untouched', async () => {
    const { file } = setup()
    mkdirSync(path.dirname(file), { recursive: true })
    const content = JSON.stringify({ format: 'marginalia-store', version: 99, rev: 0, sessions: [], annotations: [], recentEvents: [] })
    writeFileSync(file, content)
    await expect(openStore({ file })).rejects.toThrow(/newer Marginalia \(store format version 99/)
    expect(readFileSync(file, 'utf8')).toBe(content)
  })

  it('refuses an empty file and a foreign JSON file, untouched', async () => {
    const { file } = setup()
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, '')
    await expect(openStore({ file })).rejects.toThrow(/is empty/)
    writeFileSync(file, '{"hello":"world"}')
    await expect(openStore({ file })).rejects.toThrow(/not a Marginalia store file/)
    expect(readFileSync(file, 'utf8')).toBe('{"hello":"world"}')
  })

  it('ignores a torn last log line (a killed writer) and the next writer cuts it off', async () => {
    const { file } = setup()
    const first = await open(file)
    const { s } = await fill(first)
    const rev = first.rev
    await first.close()
    appendFileSync(logOf(file), '{"rev":') // a write cut short by kill -9
    const second = await open(file)
    expect(second.rev).toBe(rev)
    await second.addAnnotation({ sessionId: s.id, comment: 'after the crash' })
    const lines = readFileSync(logOf(file), 'utf8').split('\n')
    expect(lines.at(-1)).toBe('')
    for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line)).not.toThrow()
    await second.close()
    const third = await open(file)
    expect(third.rev).toBe(rev + 1)
  })

  it('a damaged line in the middle of the log is an error naming the log and the line', async () => {
    const { file } = setup()
    const first = await open(file, { compactMinBytes: 1e9 })
    await fill(first)
    await first.createSession({ url: 'http://y/' }) // the log now has lines after the snapshot
    const log = logOf(file)
    const lines = readFileSync(log, 'utf8').split('\n')
    await first.close()
    if (lines.length < 3) return expect.fail('expected a log with several lines')
    lines[0] = '{broken'
    writeFileSync(log, lines.join('\n'))
    await expect(openStore({ file })).rejects.toThrow(new RegExp(`store.events.jsonl: line 1 is not valid JSON`))
  })

  it('a failed write (disk full) rejects the command and leaves state and files as they were', async () => {
    const { file } = setup()
    let full = false
    const store = await open(file, {
      io: {
        async write(handle, data) {
          if (full) {
            await handle.write(data.subarray(0, 7)) // a partial write, then the disk is full
            throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
          }
          await handle.write(data)
        },
      },
    })
    const { s } = await fill(store)
    const stateBefore = store.getState()
    const logBefore = readFileSync(logOf(file), 'utf8')
    full = true
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    await expect(store.addAnnotation({ sessionId: s.id, comment: 'lost?' })).rejects.toThrow(/ENOSPC.*nothing of this change was saved/)
    expect(store.getState()).toBe(stateBefore)
    expect(events).toEqual([])
    expect(readFileSync(logOf(file), 'utf8')).toBe(logBefore)
    full = false
    await store.addAnnotation({ sessionId: s.id, comment: 'after space was freed' })
    const reader = await open(file)
    expect(reader.getSession(s.id).annotations.map((a) => a.comment)).toEqual([
      'Header wraps on mobile',
      'Wrong colour — ünïcødé ✓',
      'after space was freed',
    ])
  })

  it('coalesces: 500 concurrent mutations take far fewer writes, and all are durable', async () => {
    const { file } = setup()
    let writes = 0
    const store = await open(file, {
      io: {
        async write(handle, data) {
          writes++
          await handle.write(data)
        },
      },
    })
    const s = await store.createSession({ url: 'http://x/' })
    writes = 0
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.addAnnotation({ sessionId: s.id, comment: `c${i}` })))
    expect(writes).toBeLessThan(20)
    const reader = await open(file)
    expect(reader.getPending(s.id)).toHaveLength(500)
  })
})

describe('several stores on one file', () => {
  it('each store sees the other’s events on changes$, in rev order, once each', async () => {
    const { file } = setup()
    const a = await open(file)
    const s = await a.createSession({ url: 'http://x/' })
    const b = await open(file)
    const seenByB = firstValueFrom(b.changes$.pipe(take(10), toArray()))
    const seenByA = firstValueFrom(a.changes$.pipe(take(10), toArray()))
    const writes: Promise<unknown>[] = []
    for (let i = 0; i < 5; i++) {
      writes.push(a.addAnnotation({ sessionId: s.id, comment: `from a ${i}` }))
      writes.push(b.addAnnotation({ sessionId: s.id, comment: `from b ${i}` }))
    }
    await Promise.all(writes)
    const [fromB, fromA] = await Promise.all([seenByB, seenByA])
    expect(fromA.map((e) => e.rev)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(fromB.map((e) => e.rev)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(fromA).toEqual(fromB)
    expect(a.getPending(s.id)).toEqual(b.getPending(s.id))
  })

  it('a reader follows the log across compactions without missing an event', async () => {
    const { file } = setup()
    const writer = await open(file, { compactMinBytes: 1_000 })
    const s = await writer.createSession({ url: 'http://x/' })
    const reader = await open(file)
    const seen = firstValueFrom(reader.changes$.pipe(take(300), toArray()))
    const log = logOf(file)
    // A replaced log starts again small (inode numbers are no proof: a freed one may be reused).
    let replacements = 0
    let lastSize = 0
    for (let i = 0; i < 300; i++) {
      await writer.addAnnotation({ sessionId: s.id, comment: `annotation number ${i} with some padding to grow the log` })
      const size = existsSync(log) ? statSync(log).size : 0
      if (size < lastSize) replacements++
      lastSize = size
    }
    const events = await seen
    expect(replacements).toBeGreaterThanOrEqual(2) // the log was replaced several times
    expect(events.map((e) => e.rev)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2))
    expect(reader.getPending(s.id)).toEqual(writer.getPending(s.id))
  })

  it('a store opened before the file existed catches up after another store wrote and compacted', async () => {
    const { file } = setup()
    const early = await open(file, { pollIntervalMs: 0, watchFiles: false })
    const events: StoreEvent[] = []
    early.changes$.subscribe((e) => events.push(e))
    const writer = await open(file, { compactMinBytes: 1_000 })
    const s = await writer.createSession({ url: 'http://x/' })
    for (let i = 0; i < 40; i++) await writer.addAnnotation({ sessionId: s.id, comment: `annotation ${i} padded to make the log grow quickly` })
    await early.sync()
    expect(early.rev).toBe(41)
    expect(events.map((e) => e.rev)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1))
    expect(early.getPending(s.id)).toEqual(writer.getPending(s.id))
  })

  it('refused commands stay refused across processes: only one of two acknowledges wins', async () => {
    const { file } = setup()
    const a = await open(file)
    const s = await a.createSession({ url: 'http://x/' })
    const ann = await a.addAnnotation({ sessionId: s.id, comment: 'take me' })
    const b = await open(file)
    const results = await Promise.allSettled([a.acknowledge(ann.id), b.acknowledge(ann.id)])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['INVALID_TRANSITION'])
    await b.sync()
    await a.sync()
    expect(a.rev).toBe(3)
    expect(b.rev).toBe(3)
    expect(a.getAnnotation(ann.id).status).toBe('acknowledged')
    expect(b.getAnnotation(ann.id).status).toBe('acknowledged')
  })

  it('changes$ of a store wakes on another store’s write without waiting for the poll', async () => {
    const { file } = setup()
    const a = await open(file, { pollIntervalMs: 0 })
    const s = await a.createSession({ url: 'http://x/' })
    const b = await open(file, { pollIntervalMs: 0 })
    const woke = firstValueFrom(a.changes$.pipe(filter((e) => e.type === 'annotation.created')))
    await b.addAnnotation({ sessionId: s.id, comment: 'hello from b' })
    const event = await woke
    expect(event).toMatchObject({ type: 'annotation.created', annotation: { comment: 'hello from b' } })
  })
})
