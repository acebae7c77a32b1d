/**
 * Several processes, one store. A stalled lock holder keeps its lock (others get
 * STORE_BUSY, never its revs), a killed one is replaced at once, reads see every completed write
 * of another process, a refused event stops writing instead of reusing its rev, and store files
 * deleted under a running process are rewritten from memory.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { openStore, type Store } from '../../../src/store/index.js'
import { StoreBusyError } from '../../../src/store/errors.js'
import { FileAdapter } from '../../../src/store/file/file-adapter.js'
import type { StoreEvent } from '../../../src/store/events.js'
import type { StoreState } from '../../../src/store/reducer.js'
import { testDir } from '../../helpers/store.js'
import { SseClient, serve } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const HOLDER = path.resolve(import.meta.dirname, '../../fixtures/lock-holder.mjs')

interface Holder {
  child: ChildProcessWithoutNullStreams
  next: () => Promise<string>
  send: (line: string) => void
}

const cleanups = useCleanups()

function startHolder(file: string, pauseMs: number): Promise<Holder> {
  const child = spawn(process.execPath, [HOLDER, file, String(pauseMs)], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  cleanups.push(() => expect(stderr, 'the holder reported no problem').not.toMatch(/compromised/))
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const queue: string[] = []
  const waiters: ((line: string) => void)[] = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    const w = waiters.shift()
    if (w) w(line)
    else queue.push(line)
  })
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const q = queue.shift()
      if (q !== undefined) return resolve(q)
      const timer = setTimeout(() => reject(new Error('the holder said nothing for 10 s')), 10_000)
      waiters.push((line) => {
        clearTimeout(timer)
        resolve(line)
      })
    })
  const send = (line: string) => void child.stdin.write(`${line}\n`)
  return next().then((first) => {
    expect(first).toBe('ready')
    return { child, next, send }
  })
}

function logRevs(file: string): number[] {
  const log = file.replace(/\.json$/, '.events.jsonl')
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { rev: number }).rev)
}

async function open(file: string, extra: Parameters<typeof openStore>[0] = {}): Promise<Store> {
  const store = await openStore({ file, pollIntervalMs: 0, watchFiles: false, onError: () => {}, ...extra })
  cleanups.push(() => store.close().catch(() => {}))
  return store
}

describe('fencing and crash recovery across processes', () => {
  it('a holder stopped (SIGSTOP) past the stale time before its append keeps its lock: others get STORE_BUSY, then its write lands, no rev twice', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file, { lockTimeoutMs: 300, lockStaleMs: 2_000 })
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    const holder = await startHolder(file, 300)
    holder.send(`write ${session.id}`)
    expect(await holder.next()).toBe('appending')
    holder.child.kill('SIGSTOP')
    try {
      // Past the 2 s stale time: a live local holder is never taken over.
      await new Promise((r) => setTimeout(r, 2_300))
      const busy = await main.addAnnotation({ sessionId: session.id, comment: 'while it is stopped' }).catch((e: unknown) => e)
      expect(busy).toBeInstanceOf(StoreBusyError)
      expect((busy as StoreBusyError).holder?.pid).toBe(holder.child.pid)
    } finally {
      holder.child.kill('SIGCONT')
    }
    const [ok, id, rev] = (await holder.next()).split(' ')
    expect(ok).toBe('ok')
    const mine = await main.addAnnotation({ sessionId: session.id, comment: 'after it continued' })
    expect(mine.rev).toBe(Number(rev) + 1)
    expect(main.getAnnotation(id!).comment).toBe('from the holder')
    const revs = logRevs(file)
    expect(new Set(revs).size).toBe(revs.length)
    holder.send('exit')
    await new Promise((r) => holder.child.once('exit', r))
  }, 20_000)

  it('kill -9 of the lock holder: another process writes within 1 s', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file)
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    const holder = await startHolder(file, 5_000)
    holder.send(`write ${session.id}`)
    expect(await holder.next()).toBe('appending')
    holder.child.kill('SIGKILL')
    await new Promise((r) => holder.child.once('exit', r))
    const started = performance.now()
    const a = await main.addAnnotation({ sessionId: session.id, comment: 'after the crash' })
    const ms = performance.now() - started
    expect(ms).toBeLessThan(1_000)
    expect(a.rev).toBe(2)
    const reopened = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    expect(reopened.rev).toBe(2)
    await reopened.close()
  }, 20_000)

  it('100 cross-process read-after-write probes: 0 stale', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file)
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    const other = await startHolder(file, 0)
    let stale = 0
    for (let i = 0; i < 100; i++) {
      // The other process writes; once its write resolved, we read.
      other.send(`write ${session.id}`)
      const [ok, id] = (await other.next()).split(' ')
      expect(ok).toBe('ok')
      await main.catchUp()
      try {
        main.getAnnotation(id!)
      } catch {
        stale++
      }
      // And the other way round.
      const mine = await main.addAnnotation({ sessionId: session.id, comment: `probe ${i}` })
      other.send(`has ${mine.id}`)
      if ((await other.next()) !== 'yes') stale++
    }
    expect(stale).toBe(0)
    other.send('exit')
    await new Promise((r) => other.child.once('exit', r))
  }, 30_000)
})

describe('a store changed under a running process', () => {
  it('a foreign line appended while the lock is held (a takeover by the age rule) is never written over: the write fails, nothing is lost, no rev twice', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file)
    await main.createSession({ url: 'http://localhost:5173/' })
    await main.close()
    const logFile = file.replace(/\.json$/, '.events.jsonl')
    const at = new Date().toISOString()
    const sessionEvent = (id: string, rev: number): StoreEvent => ({ type: 'session.created', rev, at, sessionId: id, session: { id, url: 'http://x/', createdAt: at, rev } }) as StoreEvent
    const adapter = new FileAdapter({ file, watchFiles: false, pollIntervalMs: 0, onError: () => {} })
    cleanups.push(() => adapter.dispose())
    await adapter.load()
    const state = { rev: 2 } as StoreState
    const write = adapter.transact(async () => {
      // While this process decided, another one wrote rev 2.
      appendFileSync(logFile, `${JSON.stringify(sessionEvent('s-foreign', 2))}\n`)
      return { events: [sessionEvent('s-mine', 2)], state, recentEvents: () => [] }
    })
    await expect(write).rejects.toThrow(/changed under this process.*nothing of this change was written/)
    expect(logRevs(file)).toEqual([2]) // rev 1 is in the snapshot (close compacted)
    expect(readFileSync(logFile, 'utf8')).toContain('s-foreign')
    expect(readFileSync(logFile, 'utf8')).not.toContain('s-mine')
    // The next transaction reads the foreign event first and decides from there.
    let seen: number[] = []
    await adapter.transact(async (external) => {
      seen = external.map((e) => e.rev)
      return { events: [sessionEvent('s-mine', 3)], state: { rev: 3 } as StoreState, recentEvents: () => [] }
    })
    expect(seen).toEqual([2])
    expect(logRevs(file)).toEqual([2, 3])
    const fresh = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    expect(fresh.listSessions().map((s) => s.id)).toEqual(expect.arrayContaining(['s-foreign', 's-mine']))
    expect(fresh.rev).toBe(3)
    await fresh.close()
  })

  it('a damaged event appended while it runs: no rev is written twice, later writes are refused clearly', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file)
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    const logFile = file.replace(/\.json$/, '.events.jsonl')
    // Valid JSON and a valid event shape, but it names an annotation that does not exist.
    const bad = { type: 'annotation.deleted', rev: 2, at: new Date().toISOString(), sessionId: session.id, annotationId: 'a-missing', from: 'pending' }
    appendFileSync(logFile, `${JSON.stringify(bad)}\n`)
    for (let i = 0; i < 2; i++) {
      const e = await main.addAnnotation({ sessionId: session.id, comment: 'after the damage' }).catch((err: unknown) => err)
      expect(e).toMatchObject({ code: 'STORE_FILE' })
      expect((e as Error).message).toMatch(/rev 2/)
    }
    const revs = logRevs(file)
    expect(revs).toEqual([1, 2])
  })

  it('a snapshot changed by hand into something unusable while it runs is never overwritten (others were told it was left untouched); the log keeps every write', async () => {
    const { file } = testDir(cleanups)
    const reported: string[] = []
    const main = await open(file, { compactMinBytes: 1, onError: (e) => reported.push(e instanceof Error ? e.message : String(e)) })
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    await main.addAnnotation({ sessionId: session.id, comment: 'before the edit' })
    const edited = '{"format":"marginalia-store", "edited by hand'
    writeFileSync(file, edited)
    const other = await openStore({ file, pollIntervalMs: 0, watchFiles: false }).catch((e: unknown) => e)
    expect((other as Error).message).toMatch(/left untouched/)
    // Writes go on (into the log), and neither a compaction nor the close overwrites the edit.
    const after = await main.addAnnotation({ sessionId: session.id, comment: 'after the edit' })
    expect(after.rev).toBe(3)
    await main.close()
    expect(readFileSync(file, 'utf8')).toBe(edited)
    expect(reported.filter((m) => /changed outside Marginalia/.test(m))).toHaveLength(1)
    expect(logRevs(file)).toContain(3)
  })

  it('once the damaged line is repaired, the process reloads in place: it writes again with the next rev and its SSE clients get a reset', async () => {
    const { file } = testDir(cleanups)
    const main = await open(file, { compactMinBytes: 1 << 30 })
    const server = await serve(main, cleanups)
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    await main.addAnnotation({ sessionId: session.id, comment: 'before the damage' })
    const events = await SseClient.open(`${server.url}/api/events`, { 'Last-Event-ID': '2' })
    cleanups.push(() => events.close())
    const logFile = file.replace(/\.json$/, '.events.jsonl')
    const good = readFileSync(logFile, 'utf8')
    const bad = { type: 'annotation.deleted', rev: 3, at: new Date().toISOString(), sessionId: session.id, annotationId: 'a-missing', from: 'pending' }
    appendFileSync(logFile, `${JSON.stringify(bad)}\n`)
    const refused = await main.addAnnotation({ sessionId: session.id, comment: 'while damaged' }).catch((err: unknown) => err)
    expect(refused).toMatchObject({ code: 'STORE_FILE' })
    expect((refused as Error).message).toMatch(/reloads the store at its next write/)
    // Still damaged: still refused (the reload fails the same way), nothing written.
    expect(await main.addAnnotation({ sessionId: session.id, comment: 'still damaged' }).catch((err: unknown) => err)).toMatchObject({ code: 'STORE_FILE' })
    expect(logRevs(file)).toEqual([1, 2, 3])

    // The person repairs the log (removes the damaged line): no restart needed.
    writeFileSync(logFile, good)
    const after = await main.addAnnotation({ sessionId: session.id, comment: 'after the repair' })
    expect(after.rev).toBe(3)
    expect(logRevs(file)).toEqual([1, 2, 3])
    expect(main.getSession(session.id).annotations.map((a) => a.comment)).toEqual(['before the damage', 'after the repair'])
    await events.until((es) => es.some((e) => e.id === '3' && e.event === 'annotation.created'))
    const reset = events.events.find((e) => e.event === 'reset')
    expect(JSON.parse(reset!.data)).toMatchObject({ currentRev: 2 })
    expect(events.events.map((e) => e.event).filter((n) => n === 'reset' || n.startsWith('annotation'))).toEqual(['reset', 'annotation.created'])
    // A new process agrees.
    const fresh = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    expect(fresh.getAnnotation(after.id).comment).toBe('after the repair')
    await fresh.close()
  })

  it.each([
    ['the whole directory', (dir: string) => rmSync(dir, { recursive: true, force: true })],
    ['the event log', (dir: string) => rmSync(path.join(dir, 'store.events.jsonl'))],
    ['the snapshot', (dir: string) => rmSync(path.join(dir, 'store.json'))],
  ])('%s deleted while it runs: it rewrites the store from memory, a new process opens it with every confirmed write', async (_what, remove) => {
    const { dir, file } = testDir(cleanups)
    const storeFile = path.join(dir, '.marginalia', 'store.json')
    const main = await open(storeFile, { compactMinBytes: 1 << 30 })
    const session = await main.createSession({ url: 'http://localhost:5173/' })
    for (let i = 0; i < 3; i++) await main.addAnnotation({ sessionId: session.id, comment: `before ${i}` })
    remove(path.dirname(storeFile))
    const after = await main.addAnnotation({ sessionId: session.id, comment: 'after the deletion' })
    const after2 = await main.addAnnotation({ sessionId: session.id, comment: 'and one more' })
    const fresh = await openStore({ file: storeFile, pollIntervalMs: 0, watchFiles: false })
    expect(fresh.rev).toBe(after2.rev)
    expect(fresh.getAnnotation(after.id).comment).toBe('after the deletion')
    expect(fresh.getSession(session.id).annotations).toHaveLength(5)
    await fresh.close()
    void file
  })
})
