/**
 * A real PostgreSQL server restarted under a write load (the "restart the PostgreSQL server
 * during a write load"): the test runs its own server — `initdb` into a temporary directory, on a
 * free loopback port, with Debian's binaries — so it can stop it hard (`pg_ctl restart -m
 * immediate`: the server process dies as in a crash, then recovers from its WAL) without
 * disturbing the shared server the other tests use. Commands fail fast with STORE_UNAVAILABLE
 * while it is down, the store recovers without being reopened, and every acknowledged write is
 * in the events table afterwards, with no gap; a second process's stream sees every event once,
 * in order, across the restart.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { execFile, execFileSync, type ExecFileSyncOptions } from 'node:child_process'
import { promisify } from 'node:util'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { describe } from 'vitest'
import { openStore, type Store, type StoreEvent } from '../../../src/index.js'
import { until } from '../../helpers/eventually.js'
import { freePort } from '../../helpers/ports.js'

/** Debian's PostgreSQL binaries (newest version), or null. */
function binDir(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b))
  return versions.length > 0 ? path.join(root, versions.at(-1)!, 'bin') : null
}

const BIN = binDir()
const IS_ROOT = process.getuid?.() === 0
/** PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user. */
function pgTool(tool: string, args: string[], options: ExecFileSyncOptions = {}): string {
  const file = path.join(BIN!, tool)
  const [cmd, argv] = IS_ROOT ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, ...options }).toString()
}

function postgresUid(): { uid: number; gid: number } | null {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) }
  } catch {
    return null
  }
}

const owner = IS_ROOT ? postgresUid() : null
const why = BIN === null ? 'no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)' : IS_ROOT && owner === null ? 'running as root without a `postgres` user to run the server as' : null
if (why !== null) {
  if (IS_ROOT && !process.env.MARGINALIA_SKIP_PG) throw new Error(`the PostgreSQL restart test cannot run: ${why}. CI runs it (.ci/run installs PostgreSQL).`)
  console.warn(`SKIPPED "PostgreSQL server restart": ${why}.`)
}
const suite = why === null ? describe : describe.skip

let dir = ''
let port = 0
let url = ''

function pgCtl(...args: string[]): void {
  pgTool('pg_ctl', ['-D', path.join(dir, 'data'), '-w', '-t', '30', ...args])
}

async function pgCtlAsync(...args: string[]): Promise<void> {
  const file = path.join(BIN!, 'pg_ctl')
  const argv = ['-D', path.join(dir, 'data'), '-w', '-t', '30', ...args]
  const [cmd, all] = IS_ROOT ? ['runuser', ['-u', 'postgres', '--', file, ...argv]] : [file, argv]
  await promisify(execFile)(cmd, all, { timeout: 60_000 })
}

beforeAll(async () => {
  if (why !== null) return
  dir = mkdtempSync(path.join(tmpdir(), 'marginalia-pg-'))
  if (owner) chownSync(dir, owner.uid, owner.gid)
  port = await freePort()
  pgTool('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'])
  // Loopback only, its socket in its own directory, no other server's files touched.
  pgCtl('-l', path.join(dir, 'server.log'), '-o', `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`, 'start')
  url = `postgres://postgres@127.0.0.1:${port}/postgres`
}, 120_000)

afterAll(() => {
  if (!dir) return
  try {
    pgCtl('-m', 'immediate', 'stop')
  } catch {
    // already stopped
  }
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

async function rows(text: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url })
  c.on('error', () => {})
  await c.connect()
  try {
    return (await c.query(text)).rows as Record<string, unknown>[]
  } finally {
    await c.end()
  }
}

suite('PostgreSQL server restart', () => {
  it('restarted (immediate: a crash) during a write load: fail fast, recover without reopening, every acknowledged write kept, every event seen once in order', async () => {
    const stores: Store[] = []
    try {
      const writer = await openStore({ url, pollIntervalMs: 50, onError: () => {} })
      stores.push(writer)
      const watcher = await openStore({ url, pollIntervalMs: 50, onError: () => {} })
      stores.push(watcher)
      const seen: number[] = []
      watcher.changes$.subscribe((e: StoreEvent) => seen.push(e.rev))
      const session = await writer.createSession({ url: 'http://x/' })

      const acked: string[] = []
      const failures: unknown[] = []
      let stop = false
      let slowest = 0
      // Four writers in a loop until told to stop; each failure is timed (fail fast, never hang).
      const load = Promise.all(
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; !stop; i++) {
            const started = performance.now()
            try {
              acked.push((await writer.addAnnotation({ sessionId: session.id, comment: `w${w} #${i}` })).id)
            } catch (e) {
              slowest = Math.max(slowest, performance.now() - started)
              failures.push(e)
              await new Promise((r) => setTimeout(r, 20))
            }
          }
        }),
      )
      await until(() => acked.length >= 50, '50 writes before the restart', 30_000)
      const before = acked.length
      // Asynchronously, so the writers run (and fail fast) while the server is down.
      await pgCtlAsync('-l', path.join(dir, 'server.log'), '-m', 'immediate', 'restart', '-o', `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`)
      // The same store object writes again once the server is back: no reopen, no restart.
      await until(() => acked.length >= before + 50, '50 writes after the restart', 30_000)
      stop = true
      await load

      expect(failures.length).toBeGreaterThan(0)
      for (const f of failures) expect(f).toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(slowest).toBeLessThan(5_000)

      const events = (await rows('SELECT rev, event FROM marginalia.events ORDER BY rev')) as { rev: string; event: { annotationId?: string } }[]
      expect(events.map((r) => Number(r.rev))).toEqual(events.map((_, i) => i + 1))
      const written = new Set(events.map((r) => r.event.annotationId))
      for (const id of acked) expect(written.has(id)).toBe(true)

      // The other process re-established LISTEN (or polled) and saw everything once, in order.
      await until(() => seen.length === events.length, 'the watcher to catch up', 10_000)
      expect(seen).toEqual(events.map((_, i) => i + 1))
      await writer.sync()
      expect(writer.rev).toBe(events.length)
    } finally {
      for (const s of stores) await s.close().catch(() => {})
    }
  }, 120_000)
})
