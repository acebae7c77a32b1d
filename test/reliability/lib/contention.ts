/**
 * Contention: several processes mutate one store file at once. Nothing may be lost, the final
 * rev is the start plus the successful mutations, and every process's changes$ carries every
 * event exactly once, in rev order.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { expect } from 'vitest'
import { openStore, type StoreEvent } from '../../../src/index.js'
import { tempDir } from '../../helpers/store.js'

const CONTENDER = path.resolve(import.meta.dirname, '../../fixtures/contender.mjs')

interface Op {
  kind: 'create' | 'reply' | 'acknowledge'
  ok: boolean
  id?: string
  rev?: number
  replyId?: string
  code?: string
}

interface Report {
  label: string
  openedAt: number
  rev: number
  seen: [number, string, string, string][]
  ops: Op[]
}

export interface ContentionFigures {
  processes: number
  attempted: number
  succeeded: number
  refused: number
  startRev: number
  finalRev: number
  eventsSeenPerProcess: number
  writerSwitches: number
  ms: number
}

class Contender {
  readonly child: ChildProcessWithoutNullStreams
  private readonly lines: string[] = []
  private readonly waiters: ((line: string) => void)[] = []
  private stderr = ''

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [CONTENDER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const waiter = this.waiters.shift()
      if (waiter) waiter(line)
      else this.lines.push(line)
    })
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d))
  }

  line(): Promise<string> {
    const ready = this.lines.shift()
    if (ready !== undefined) return Promise.resolve(ready)
    return new Promise((resolve, reject) => {
      this.waiters.push(resolve)
      this.child.once('exit', (code) => reject(new Error(`contender exited with ${code}: ${this.stderr}`)))
    })
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`)
  }
}

export async function runContention(options: { processes: number; perProcess: number; inFlight: number }, cleanups: (() => unknown)[]): Promise<ContentionFigures> {
  const started = Date.now()
  const { file, cleanup } = tempDir('marginalia-contention-')
  cleanups.push(cleanup)
  const setup = await openStore({ file })
  const session = await setup.createSession({ url: 'http://localhost:5173/' })
  const startRev = setup.rev
  await setup.close()

  const contenders = Array.from({ length: options.processes }, (_, i) => new Contender([file, session.id, String(options.perProcess), String(options.inFlight), `p${i}`]))
  for (const c of contenders) cleanups.push(() => c.child.kill('SIGKILL'))
  for (const c of contenders) expect(await c.line()).toBe('ready')
  for (const c of contenders) c.send('go') // the barrier: all of them start together
  for (const c of contenders) expect(await c.line()).toBe('done')

  // Everyone has finished writing: read the whole log now, before their close() compacts it.
  const checker = await openStore({ file, eventWindow: 1_000_000, pollIntervalMs: 0, watchFiles: false })
  const finalRev = checker.rev
  const events = checker.changesSince(startRev)
  for (const c of contenders) c.send(`final ${finalRev}`)
  const reports = await Promise.all(contenders.map(async (c) => JSON.parse(await c.line()) as Report))

  const ops = reports.flatMap((r) => r.ops)
  const succeeded = ops.filter((o) => o.ok)
  // Zero lost: the rev is the start plus every successful mutation, and the log is that long.
  expect(ops).toHaveLength(options.processes * options.perProcess)
  expect(finalRev).toBe(startRev + succeeded.length)
  expect(events.map((e) => e.rev)).toEqual(Array.from({ length: finalRev - startRev }, (_, i) => startRev + 1 + i))
  // Refusals are only the expected race: an annotation someone else acknowledged first.
  for (const o of ops.filter((x) => !x.ok)) expect(o).toMatchObject({ kind: 'acknowledge', code: 'INVALID_TRANSITION' })
  // Every successful mutation is in the log at the rev its promise reported, and in the state.
  const byRev = new Map<number, StoreEvent>(events.map((e) => [e.rev, e]))
  for (const o of succeeded) {
    const e = byRev.get(o.rev!)
    expect(e, `no event at rev ${o.rev} for ${JSON.stringify(o)}`).toBeDefined()
    expect('annotationId' in e! && e.annotationId).toBe(o.id)
    const type = { create: 'annotation.created', reply: 'annotation.replied', acknowledge: 'annotation.status_changed' }[o.kind]
    expect(e!.type).toBe(type)
    const annotation = checker.getAnnotation(o.id!)
    if (o.kind === 'reply') expect(annotation.replies.map((r) => r.id)).toContain(o.replyId)
    if (o.kind === 'acknowledge') expect(annotation.status).toBe('acknowledged')
  }
  // At most one acknowledge per annotation won.
  const acks = succeeded.filter((o) => o.kind === 'acknowledge').map((o) => o.id)
  expect(new Set(acks).size).toBe(acks.length)
  // Every process saw every event once, in order, with the same content as the log.
  const expectedSeen = events.map((e) => [e.rev, e.type, 'annotationId' in e ? e.annotationId : e.sessionId, e.at])
  for (const r of reports) {
    expect(r.openedAt).toBe(startRev)
    expect(r.rev).toBe(finalRev)
    expect(r.seen).toEqual(expectedSeen)
  }
  // The processes really interleaved on the lock.
  const writerOf = new Map<string, string>()
  for (const r of reports) for (const o of r.ops) if (o.kind === 'create' && o.ok) writerOf.set(o.id!, r.label)
  const creators = events.filter((e) => e.type === 'annotation.created').map((e) => writerOf.get((e as { annotationId: string }).annotationId))
  const writerSwitches = creators.filter((w, i) => i > 0 && w !== creators[i - 1]).length
  expect(writerSwitches).toBeGreaterThanOrEqual(options.processes)
  await checker.close()

  return {
    processes: options.processes,
    attempted: ops.length,
    succeeded: succeeded.length,
    refused: ops.length - succeeded.length,
    startRev,
    finalRev,
    eventsSeenPerProcess: reports[0]!.seen.length,
    writerSwitches,
    ms: Date.now() - started,
  }
}
