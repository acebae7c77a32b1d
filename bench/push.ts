/**
 * Push rows for `npm run bench`: a person files an annotation, how long until `marginalia watch`
 * (another process) prints its line — on the file store (fs.watch on the log) and on PostgreSQL
 * (LISTEN/NOTIFY) — and what `marginalia hook` costs at every agent turn with nothing to tell,
 * against a bare `node -e 0`.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { openStore, type Store } from '../src/index.js'
import { CLI, median, percentile, realisticAnnotation, seedStore, tempDir } from './lib.js'

type Record_ = (scenario: string, metric: string, value: number, unit: string, goal?: { op: '<=' | '>='; limit: number }) => void
const PG_URL = process.env.MARGINALIA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Person → watch line, `runs` times: the writer adds one annotation and waits for the watcher's line with its id. */
async function watchLatency(store: Store, sessionId: string, location: string, runs: number): Promise<number[]> {
  const child = spawn(process.execPath, [CLI, 'watch', '--store', location], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MARGINALIA_STORE: '', DATABASE_URL: '' } })
  let stdout = ''
  const waiters = new Map<string, () => void>()
  child.stdout.on('data', (d: Buffer) => {
    stdout += d
    for (const [id, done] of waiters) {
      if (!stdout.includes(id)) continue
      waiters.delete(id)
      done()
    }
  })
  try {
    // The watcher is up once it printed the seed annotation.
    const seed = await store.addAnnotation(realisticAnnotation(sessionId, -1))
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('watch printed nothing in 20 s')), 20_000)
      const done = (): void => {
        clearTimeout(t)
        resolve()
      }
      if (stdout.includes(seed.id)) done()
      else waiters.set(seed.id, done)
    })
    const latencies: number[] = []
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now()
      const printed = new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no watch line in 10 s')), 10_000)
        const done = (): void => {
          clearTimeout(t)
          latencies.push(performance.now() - t0)
          resolve()
        }
        void store.addAnnotation(realisticAnnotation(sessionId, i)).then((a) => {
          if (stdout.includes(a.id)) done()
          else waiters.set(a.id, done)
        })
      })
      await printed
    }
    return latencies
  } finally {
    child.kill('SIGTERM')
  }
}

export async function pushBench(smoke: boolean, record: Record_): Promise<void> {
  const runs = smoke ? 3 : 40
  // File store.
  {
    const dir = tempDir()
    const { file, sessionId } = await seedStore(dir, 0)
    const store = await openStore({ file, pollIntervalMs: 0 })
    try {
      const l = await watchLatency(store, sessionId, file, runs)
      record('person → watch line, file store, across processes', 'p50', median(l), 'ms', { op: '<=', limit: 50 })
      record('person → watch line, file store, across processes', 'p99', percentile(l, 99), 'ms')
    } finally {
      await store.close()
    }
  }
  // PostgreSQL, when reachable.
  const schema = `bench_push_${process.pid}`
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 })
  admin.on('error', () => {})
  let reachable = true
  try {
    await admin.connect()
  } catch {
    reachable = false
    process.stderr.write('  PostgreSQL unreachable: the PostgreSQL watch row is skipped\n')
  }
  if (reachable) {
    const url = `${PG_URL}?schema=${schema}`
    const store = await openStore({ url: PG_URL, schema })
    try {
      const session = await store.createSession({ url: 'http://localhost:5173/' })
      const l = await watchLatency(store, session.id, url, runs)
      record('person → watch line, PostgreSQL, across processes', 'p50', median(l), 'ms', { op: '<=', limit: 50 })
      record('person → watch line, PostgreSQL, across processes', 'p99', percentile(l, 99), 'ms')
    } finally {
      await store.close()
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
      await admin.end()
    }
  }
  // The hook with nothing to tell, against a bare Node start (both spawned the same way, interleaved).
  {
    const root = tempDir()
    writeFileSync(path.join(root, 'package.json'), '{}')
    mkdirSync(path.join(root, '.marginalia'))
    // A store with work done (nothing pending), as most turns find it.
    const seeded = await openStore({ file: path.join(root, '.marginalia', 'store.json'), pollIntervalMs: 0 })
    const session = await seeded.createSession({ url: 'http://localhost:5173/' })
    for (let i = 0; i < 20; i++) await seeded.resolve((await seeded.addAnnotation(realisticAnnotation(session.id, i))).id, { summary: 'done' })
    await seeded.close()
    const spawns = smoke ? 3 : 20
    const input = JSON.stringify({ session_id: 'bench', cwd: root, hook_event_name: 'Stop', stop_hook_active: false })
    const bare: number[] = []
    const hook: number[] = []
    const time = (args: string[], into: number[], stdin: string): void => {
      const t0 = performance.now()
      const r = spawnSync(process.execPath, args, { input: stdin, cwd: root, env: { ...process.env, MARGINALIA_STORE: '', DATABASE_URL: '' } })
      into.push(performance.now() - t0)
      if (r.status !== 0 || (args[1] === 'hook' && r.stdout.length > 0)) throw new Error(`${args.join(' ')}: exit ${r.status}, stdout ${r.stdout.toString()} ${r.stderr.toString()}`)
    }
    for (let i = 0; i < spawns; i++) {
      time(['-e', '0'], bare, '')
      time([CLI, 'hook', 'claude', 'Stop'], hook, input)
    }
    record('hook, nothing pending', 'bare node -e 0 p50', median(bare), 'ms')
    record('hook, nothing pending', 'marginalia hook claude Stop p50', median(hook), 'ms')
    record('hook, nothing pending', 'hook / bare node', median(hook) / median(bare), '×', { op: '<=', limit: 4 })
  }
}
