/**
 * Crash consistency: SIGKILL a writing process at random moments (and right as it writes a
 * snapshot). After each kill the store must open without any manual repair (a stale lock is
 * recovered, a torn last line ignored), and every mutation whose promise had resolved (the
 * writer reported it on stdout) must be there.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { openStore } from '../../../../src/index.js'
import { testDir } from '../../../helpers/store.js'
import { type Cleanups } from '../../../helpers/cleanup.js'

const WRITER = path.resolve(import.meta.dirname, '../../../fixtures/crash-writer.mjs')
const LOCK_STALE_MS = 2_000

export interface CrashFigures {
  kills: number
  killsDuringCompaction: number
  killsBeforeFirstWrite: number
  staleLocksRecovered: number
  tornTailsFound: number
  mutationsReported: number
  mutationsVerified: number
  snapshotsWritten: number
  verifyMs: number[]
  ms: number
}

interface Reported {
  k: 'S' | 'c' | 'r'
  id: string
  reply?: string
}

/** A tiny seeded PRNG, so kill moments are reproducible for a given seed. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

interface KillResult {
  reported: Reported[]
  duringCompaction: boolean
  snapshots: number
  wroteAnything: boolean
}

/**
 * Run one writer and SIGKILL it: `delayMs` after it opened the store (or after it was spawned,
 * `fromSpawn`, to hit start-up and loading too), or (compaction mode) as soon as it starts a snapshot.
 */
function runAndKill(file: string, delayMs: number, fromSpawn: boolean, atCompaction: boolean, compactMinBytes: number, splitWrites: boolean, cleanups: Cleanups): Promise<KillResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, file, String(LOCK_STALE_MS), String(compactMinBytes), '4', splitWrites ? '1' : '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    cleanups.push(() => child.kill('SIGKILL'))
    let out = ''
    let stderr = ''
    let inSnapshot = false
    let duringCompaction = false
    let killed = false
    const kill = (): void => {
      if (killed) return
      killed = true
      duringCompaction = inSnapshot
      child.kill('SIGKILL')
    }
    let timer: ReturnType<typeof setTimeout> | undefined = fromSpawn ? setTimeout(kill, delayMs) : undefined
    child.stdout.on('data', (d: Buffer) => {
      out += d
      if (!timer && out.startsWith('open\n')) timer = setTimeout(kill, delayMs)
      if (!atCompaction || killed) return
      // Look at complete lines only.
      const lines = out.slice(0, out.lastIndexOf('\n') + 1).split('\n')
      if (lines.includes('snap') && lines.lastIndexOf('snap') > lines.lastIndexOf('snapped')) {
        inSnapshot = true
        kill()
      }
    })
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (signal !== 'SIGKILL') return reject(new Error(`the writer ended by itself (${code}): ${stderr}`))
      const complete = out.slice(0, out.lastIndexOf('\n') + 1).split('\n').filter((l) => l.startsWith('{'))
      resolve({
        reported: complete.map((l) => JSON.parse(l) as Reported),
        duringCompaction,
        snapshots: out.split('\n').filter((l) => l === 'snapped').length,
        wroteAnything: complete.length > 0,
      })
    })
  })
}

export async function runCrashes(
  options: { kills: number; lanes: number; seed: number; compactionEvery: number; freshFileEvery: number; maxDelayMs: number },
  cleanups: Cleanups,
): Promise<CrashFigures> {
  const started = Date.now()
  const figures: CrashFigures = {
    kills: 0,
    killsDuringCompaction: 0,
    killsBeforeFirstWrite: 0,
    staleLocksRecovered: 0,
    tornTailsFound: 0,
    mutationsReported: 0,
    mutationsVerified: 0,
    snapshotsWritten: 0,
    verifyMs: [],
    ms: 0,
  }
  const { dir } = testDir(cleanups, 'marginalia-crash-')
  const perLane = Math.ceil(options.kills / options.lanes)

  async function lane(index: number): Promise<void> {
    const random = prng(options.seed + index * 1_000_003)
    let file = ''
    let reported: Reported[] = []
    for (let k = 0; k < perLane && index * perLane + k < options.kills; k++) {
      if (k % options.freshFileEvery === 0) {
        file = path.join(dir, `lane${index}`, `gen${k}`, 'store.json')
        reported = []
      }
      const atCompaction = k % options.compactionEvery === options.compactionEvery - 1
      const compactMinBytes = atCompaction ? 1_024 : random() < 0.5 ? 2_048 : 64 * 1024
      // Random moments: during start-up, while opening, while writing.
      const fromSpawn = !atCompaction && random() < 0.2
      const delayMs = atCompaction ? 8_000 : Math.floor(random() * options.maxDelayMs)
      const splitWrites = !atCompaction && random() < 0.5
      const result = await runAndKill(file, delayMs, fromSpawn, atCompaction, compactMinBytes, splitWrites, cleanups)
      figures.kills++
      if (result.duringCompaction) figures.killsDuringCompaction++
      if (!result.wroteAnything) figures.killsBeforeFirstWrite++
      figures.snapshotsWritten += result.snapshots
      figures.mutationsReported += result.reported.length
      reported.push(...result.reported)

      const log = path.join(path.dirname(file), 'store.events.jsonl')
      if (existsSync(`${file}.lock`)) figures.staleLocksRecovered++
      if (existsSync(log)) {
        const bytes = readFileSync(log)
        if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) figures.tornTailsFound++
      }
      // Restart with no repair: open (waits out a stale lock), everything reported is there, and a write works.
      const t0 = Date.now()
      const store = await openStore({ file, lockStaleMs: LOCK_STALE_MS, pollIntervalMs: 0, watchFiles: false })
      try {
        for (const r of reported) {
          if (r.k === 'S') {
            expect(() => store.getSession(r.id), `session ${r.id} lost after kill ${figures.kills}`).not.toThrow()
            continue
          }
          const annotation = store.getAnnotation(r.id) // throws NOT_FOUND if it was lost
          if (r.k === 'r') expect(annotation.replies.map((x) => x.id), `reply ${r.reply} lost after kill ${figures.kills}`).toContain(r.reply)
          figures.mutationsVerified++
        }
        const session = store.listSessions()[0]
        if (session) {
          const a = await store.addAnnotation({ sessionId: session.id, comment: 'written after the restart' })
          reported.push({ k: 'c', id: a.id })
        }
      } finally {
        await store.close()
      }
      figures.verifyMs.push(Date.now() - t0)
    }
  }

  await Promise.all(Array.from({ length: options.lanes }, (_, i) => lane(i)))
  figures.ms = Date.now() - started
  return figures
}
