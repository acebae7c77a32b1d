/**
 * Hostile files and disks: truncated, corrupt, empty, future-version and read-only store files,
 * a read-only directory, a full disk (ENOSPC through the adapter's io hooks). Every refusal is
 * a StoreFileError naming the file, the original bytes stay as they were, reads keep working
 * where they can, and nothing reports success that was not written.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { spawn } from 'node:child_process'
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { openStore, StoreFileError, type OpenStoreOptions, type Store, type StoreEvent } from '../../../src/index.js'
import { deterministic, tempDir } from '../../helpers/store.js'
import { filesOf, populated } from './lib/hostile.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const seed = Number(process.env.FC_SEED ?? 20_261_122)
const PROBE = path.resolve(import.meta.dirname, '../../fixtures/readonly-probe.mjs')

function setup() {
  const t = tempDir('marginalia-hostile-')
  cleanups.push(t.cleanup)
  return { ...t, log: path.join(path.dirname(t.file), 'store.events.jsonl') }
}

async function open(file: string, extra: OpenStoreOptions = {}): Promise<Store> {
  const store = await openStore({ file, pollIntervalMs: 0, watchFiles: false, ...deterministic(), ...extra })
  cleanups.push(() => store.close())
  return store
}

async function refusal(options: OpenStoreOptions): Promise<StoreFileError> {
  const error = await openStore(options).then(
    async (s) => {
      await s.close()
      return null
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreFileError)
  return error as StoreFileError
}

describe('damaged store files: a clear error naming the file, the bytes untouched', () => {
  it('a snapshot truncated at any point', async () => {
    const { file } = setup()
    await populated(file)
    const original = readFileSync(file)
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.length - 1 }), async (cut) => {
        const damaged = original.subarray(0, cut)
        writeFileSync(file, damaged)
        const error = await refusal({ file })
        expect(error.file).toBe(path.resolve(file))
        expect(error.message).toContain(path.resolve(file))
        expect(error.message).toMatch(cut === 0 ? /is empty/ : /not valid JSON|not a Marginalia store file/)
        expect(readFileSync(file).equals(damaged)).toBe(true)
      }),
      { seed, numRuns: 40 },
    )
  })

  it('garbage: binary noise, a JSON array, a foreign object, a directory in its place', async () => {
    const { dir, file } = setup()
    mkdirSync(path.dirname(file), { recursive: true })
    for (const [content, pattern] of [
      [Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x7b, 0x22]), /not valid JSON/],
      [Buffer.from('[1,2,3]'), /expected a JSON object/],
      [Buffer.from('{"format":"marginalia-store","version":1,"rev":-4,"sessions":[],"annotations":[],"recentEvents":[]}'), /"rev" must be an integer/],
      [Buffer.from('{"format":"marginalia-store","version":1,"rev":0,"sessions":{},"annotations":[],"recentEvents":[]}'), /must be arrays/],
      [Buffer.from('{"format":"marginalia-store","version":1,"rev":0,"sessions":[],"annotations":[{"id":"a"}],"recentEvents":[]}'), /annotation a is malformed/],
    ] as const) {
      writeFileSync(file, content)
      const error = await refusal({ file })
      expect(error.message).toMatch(pattern)
      expect(error.message).toContain(path.resolve(file))
      expect(readFileSync(file).equals(content)).toBe(true)
    }
    rmSync(file)
    mkdirSync(file)
    const error = await refusal({ file })
    expect(error.message).toContain(path.resolve(file))
    expect(readdirSync(path.join(dir, '.marginalia'))).toEqual(['store.json'])
  })

  it('a file from a future version, a log line from a future version', async () => {
    const { file, log } = setup()
    await populated(file)
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
    const before = filesOf(path.dirname(file))
    writeFileSync(file, JSON.stringify({ ...snapshot, version: 2 }))
    const future = readFileSync(file)
    expect((await refusal({ file })).message).toMatch(/newer Marginalia \(store format version 2; this version reads up to 1\)/)
    expect(readFileSync(file).equals(future)).toBe(true)
    writeFileSync(file, before['store.json']!)
    appendFileSync(log, JSON.stringify({ rev: 999, at: '2030-01-01T00:00:00.000Z', type: 'annotation.teleported', sessionId: 'x' }) + '\n')
    const logBytes = readFileSync(log)
    const error = await refusal({ file })
    expect(error.file).toBe(log)
    expect(error.message).toMatch(/store\.events\.jsonl: line \d+ is not a valid Marginalia event \(damaged, or written by a newer version\?\)/)
    expect(readFileSync(log).equals(logBytes)).toBe(true)
  })

  it('a damaged log line that is still valid JSON (found by the stress run: a bare TypeError, or a reducer error naming no file)', async () => {
    const { file, log } = setup()
    await populated(file)
    const original = readFileSync(log, 'utf8')
    const snapshot = readFileSync(file)
    const lines = original.split('\n')
    // A field name damaged: the reply is gone.
    const noReply = [lines[0]!.replace('"reply":', '"r\u007fply":'), ...lines.slice(1)].join('\n')
    writeFileSync(log, noReply)
    let error = await refusal({ file })
    expect(error.file).toBe(log)
    expect(error.message).toMatch(/line 1 is not a valid Marginalia event/)
    expect(readFileSync(log, 'utf8')).toBe(noReply)
    // An id damaged: the event names an annotation that does not exist.
    const dangling = [lines[0]!.replace(/"annotationId":"ann_/, '"annotationId":"an_'), ...lines.slice(1)].join('\n')
    writeFileSync(log, dangling)
    writeFileSync(file, snapshot)
    error = await refusal({ file })
    expect(error.file).toBe(path.resolve(file))
    expect(error.message).toMatch(/event rev 8 \(annotation\.replied\) in its event log cannot be applied: .*unknown annotation an_0002/)
    expect(readFileSync(log, 'utf8')).toBe(dangling)
    expect(readFileSync(file).equals(snapshot)).toBe(true)
  })

  it('a log cut at any byte opens (a torn last line is ignored) with exactly its complete lines', async () => {
    const { file, log } = setup()
    const { snapshotRev } = await populated(file)
    const original = readFileSync(log)
    const snapshot = readFileSync(file)
    const lines = original.toString('utf8').split('\n').filter((l) => l !== '')
    expect(lines.length).toBe(5)
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.length }), async (cut) => {
        writeFileSync(file, snapshot)
        writeFileSync(log, original.subarray(0, cut))
        const complete = original.subarray(0, cut).toString('utf8').split('\n').length - 1
        const store = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
        try {
          expect(store.rev).toBe(snapshotRev + complete)
          expect(store.changesSince(snapshotRev).map((e) => JSON.stringify(e))).toEqual(lines.slice(0, complete))
          expect(readFileSync(log).equals(original.subarray(0, cut))).toBe(true) // a reader never cuts
        } finally {
          await store.close()
        }
      }),
      { seed, numRuns: 40 },
    )
  })
})

/** Run the probe with no privileges (root ignores file modes), on a store the test made read-only. */
function probe(file: string): Promise<Record<string, unknown>> {
  const asRoot = process.getuid?.() === 0
  const child = spawn(process.execPath, [PROBE, file], { stdio: ['ignore', 'pipe', 'pipe'], ...(asRoot ? { uid: 65_534, gid: 65_534 } : {}) })
  cleanups.push(() => child.kill('SIGKILL'))
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => (out += d))
  child.stderr.on('data', (d: Buffer) => (err += d))
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, unknown>) : reject(new Error(`probe exited ${code}: ${err}`)))),
  )
}

describe('read-only files and directories: reads work, writes are refused by name, nothing changes', () => {
  async function readOnlyCase(prepare: (paths: { root: string; dir: string; file: string; log: string }) => void) {
    const { dir: root, file, log } = setup()
    await populated(file)
    const dir = path.dirname(file)
    chmodSync(root, 0o755)
    chmodSync(dir, 0o777)
    prepare({ root, dir, file, log })
    cleanups.push(() => chmodSync(dir, 0o777))
    const before = filesOf(dir)
    const report = await probe(file)
    expect(filesOf(dir)).toEqual(before)
    return report
  }

  it('a read-only snapshot and log', async () => {
    const report = await readOnlyCase(({ file, log }) => {
      chmodSync(file, 0o444)
      chmodSync(log, 0o444)
    })
    expect(report).toMatchObject({ opened: true, rev: 12, sessions: 1, pending: 6, changes: 3, revAfter: 12 })
    expect(report.mutation).toMatchObject({ ok: false, code: 'STORE_FILE' })
    expect((report.mutation as { message: string }).message).toMatch(/(store\.json|store\.events\.jsonl): is read-only/)
  })

  it('a read-only snapshot beside a writable log (found: the write went to the log and close replaced the snapshot)', async () => {
    const report = await readOnlyCase(({ file, log }) => {
      chmodSync(file, 0o444)
      chmodSync(log, 0o666)
    })
    expect(report).toMatchObject({ opened: true, rev: 12, revAfter: 12, mutation: { ok: false, code: 'STORE_FILE' } })
    expect((report.mutation as { file: string }).file).toMatch(/store\.json$/)
    expect((report.mutation as { message: string }).message).toMatch(/store\.json: is read-only .*nothing was written/)
  })

  it('a read-only directory', async () => {
    const report = await readOnlyCase(({ dir, file, log }) => {
      chmodSync(file, 0o666)
      chmodSync(log, 0o666)
      chmodSync(dir, 0o555)
    })
    expect(report).toMatchObject({ opened: true, rev: 12, pending: 6, revAfter: 12, mutation: { ok: false, code: 'STORE_FILE' } })
    expect((report.mutation as { message: string }).message).toMatch(/store\.json\.lock: cannot be created: EACCES/)
  })
})

describe('a full disk (ENOSPC through the io hooks)', () => {
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })

  it('a failed log append: every mutation of the batch rejects, none is published, none is there after reopen', async () => {
    const { file, log } = setup()
    const { sessionId, rev } = await populated(file)
    let full = false
    const store = await open(file, {
      io: {
        async write(handle, data) {
          if (!full) return void (await handle.write(data))
          await handle.write(data.subarray(0, Math.floor(data.length / 2))) // some lines made it, then the disk filled up
          throw enospc()
        },
      },
    })
    const before = filesOf(path.dirname(file))
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    full = true
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.addAnnotation({ sessionId, comment: `during the full disk ${i}` })))
    for (const r of results) {
      expect(r.status).toBe('rejected')
      const reason = (r as PromiseRejectedResult).reason as StoreFileError
      expect(reason).toBeInstanceOf(StoreFileError)
      expect(reason.message).toContain(log)
      expect(reason.message).toMatch(/ENOSPC.*nothing of this change was saved/)
    }
    expect(events).toEqual([])
    expect(store.rev).toBe(rev)
    expect(filesOf(path.dirname(file))).toEqual(before)
    full = false
    await store.addAnnotation({ sessionId, comment: 'space again' })
    const reader = await open(file)
    expect(reader.rev).toBe(rev + 1)
    expect(reader.listAnnotations().filter((a) => a.comment.startsWith('during'))).toEqual([])
  })

  it('a failed snapshot during compaction loses nothing and leaves the old snapshot as it was', async () => {
    const { file } = setup()
    const { sessionId, rev } = await populated(file)
    const background: unknown[] = []
    let snapshotAttempts = 0
    const store = await open(file, {
      compactMinBytes: 256,
      onError: (e) => background.push(e),
      io: {
        async writeSnapshot() {
          snapshotAttempts++
          throw enospc()
        },
      },
    })
    const snapshot = readFileSync(file)
    const ids: string[] = []
    for (let i = 0; i < 30; i++) ids.push((await store.addAnnotation({ sessionId, comment: `kept ${i} ${'padding '.repeat(20)}` })).id)
    expect(snapshotAttempts).toBeGreaterThan(0)
    expect(background.length).toBe(snapshotAttempts)
    expect(String((background[0] as Error).message)).toMatch(/store\.json: could not save a snapshot \(the event log still has everything\): ENOSPC/)
    expect(readFileSync(file).equals(snapshot)).toBe(true)
    await store.close()
    const reader = await open(file)
    expect(reader.rev).toBe(rev + 30)
    for (const id of ids) expect(reader.getAnnotation(id).comment).toMatch(/^kept/)
  })

  it('no room for the first snapshot of a new store: the mutation rejects naming the file, nothing is there', async () => {
    const { file } = setup()
    let full = true
    const store = await open(file, {
      io: {
        async writeSnapshot(low, data) {
          if (full) throw enospc()
          low.data = data
          await low.write()
        },
      },
    })
    const error = await store.createSession({ url: 'http://localhost:5173/' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreFileError)
    expect((error as Error).message).toMatch(new RegExp(`${path.resolve(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: could not be created \\(ENOSPC`))
    expect(store.rev).toBe(0)
    expect(existsSync(file)).toBe(false)
    full = false
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const reader = await open(file)
    expect(reader.listSessions().map((s) => s.id)).toEqual([session.id])
  })
})
