/**
 * Contention: several processes mutate one store file at once. Nothing may be lost, the final
 * rev is the start plus the successful mutations, and every process's changes$ carries every
 * event exactly once, in rev order.
 *
 * With `serve`, a `marginalia serve` process (the built CLI) on the same file takes REST writes
 * from this process at the same time (annotations and human replies, many in flight), and an
 * SSE client follows its /api/events all along: it must receive every event of the run exactly
 * once, in rev order, the contenders' ones included.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { Agent } from 'node:http'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { expect } from 'vitest'
import { openStore, type Annotation, type StoreEvent } from '../../../../src/index.js'
import { request, SseClient } from '../../../helpers/http.js'
import { testDir } from '../../../helpers/store.js'
import { startServe } from './serve.js'
import { type Cleanups } from '../../../helpers/cleanup.js'

const CONTENDER = path.resolve(import.meta.dirname, '../../../fixtures/contender.mjs')

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
  /** With `serve`: REST writes attempted, answered 2xx, and the events the SSE client received. */
  rest?: {
    attempted: number
    succeeded: number
    creates: number
    replies: number
    statuses: Record<string, number>
    sseEvents: number
    /** How often the writer of consecutive creates switched to or from the serve process. */
    serveSwitches: number
    serveExit: number | null
  }
  ms: number
}

export interface ServeContention {
  /** REST writes sent to the serve process during the run (about half creates, half human replies). */
  writes: number
  /** How many of them are in flight at once. */
  inFlight: number
}

interface RestOp {
  kind: 'create' | 'reply'
  status: number
  id?: string
  rev?: number
  replyId?: string
}

/** The REST writers: `writes` POSTs, `inFlight` at a time, creates and human replies mixed. */
async function restWrites(url: string, sessionId: string, options: ServeContention, known: () => string[]): Promise<RestOp[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.inFlight })
  const ops: RestOp[] = []
  const mine: string[] = []
  let next = 0
  const one = async (i: number): Promise<void> => {
    const pool = known()
    const kind = i % 2 === 0 || (mine.length === 0 && pool.length === 0) ? 'create' : 'reply'
    if (kind === 'create') {
      const r = await request(`${url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `rest ${i}` }, agent, timeoutMs: 60_000 })
      const a = r.json as Annotation | undefined
      if (r.status === 201 && a) mine.push(a.id)
      ops.push(r.status === 201 && a ? { kind, status: r.status, id: a.id, rev: a.rev } : { kind, status: r.status })
    } else {
      // Any process's annotation, or one of ours: human replies never conflict with a status.
      const from = i % 4 === 1 && pool.length > 0 ? pool : mine.length > 0 ? mine : pool
      const id = from[(i * 7919) % from.length]!
      const r = await request(`${url}/api/annotations/${id}/replies`, { method: 'POST', body: { message: `rest reply ${i}` }, agent, timeoutMs: 60_000 })
      const a = r.json as Annotation | undefined
      ops.push(r.status === 201 && a ? { kind, status: r.status, id, rev: a.rev, replyId: a.replies.at(-1)!.id } : { kind, status: r.status })
    }
  }
  const worker = async (): Promise<void> => {
    while (next < options.writes) await one(next++)
  }
  try {
    await Promise.all(Array.from({ length: options.inFlight }, worker))
  } finally {
    agent.destroy()
  }
  return ops
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

export async function runContention(
  options: { processes: number; perProcess: number; inFlight: number; serve?: ServeContention },
  cleanups: Cleanups,
): Promise<ContentionFigures> {
  const started = Date.now()
  const { file } = testDir(cleanups, 'marginalia-contention-')
  const setup = await openStore({ file })
  const session = await setup.createSession({ url: 'http://localhost:5173/' })
  const startRev = setup.rev
  await setup.close()

  const contenders = Array.from({ length: options.processes }, (_, i) => new Contender([file, session.id, String(options.perProcess), String(options.inFlight), `p${i}`]))
  for (const c of contenders) cleanups.push(() => c.child.kill('SIGKILL'))
  for (const c of contenders) expect(await c.line()).toBe('ready')

  // The serve process and its event-stream client are there before anyone writes.
  const serve = options.serve ? await startServe(file, [], cleanups) : undefined
  const sse = serve ? await SseClient.open(`${serve.url}/api/events`, { 'Last-Event-ID': String(startRev) }) : undefined
  if (sse) cleanups.push(() => sse.close())
  // Annotations any process created, as the event stream reports them (the REST replies' targets).
  const created: string[] = []
  let sseScanned = 0
  const sseSeen = (): string[] => {
    const events = sse?.events ?? []
    for (; sseScanned < events.length; sseScanned++) {
      const e = events[sseScanned]!
      if (e.event === 'annotation.created') created.push((JSON.parse(e.data) as { annotationId: string }).annotationId)
    }
    return created
  }

  for (const c of contenders) c.send('go') // the barrier: all of them start together
  const rest = serve && options.serve ? restWrites(serve.url, session.id, options.serve, sseSeen) : Promise.resolve([])
  for (const c of contenders) expect(await c.line()).toBe('done')
  const restOps = await rest

  // Everyone has finished writing: read the whole log now, before their close() compacts it.
  const checker = await openStore({ file, eventWindow: 1_000_000, pollIntervalMs: 0, watchFiles: false })
  const finalRev = checker.rev
  const events = checker.changesSince(startRev)
  for (const c of contenders) c.send(`final ${finalRev}`)
  const reports = await Promise.all(contenders.map(async (c) => JSON.parse(await c.line()) as Report))

  const ops = reports.flatMap((r) => r.ops)
  const succeeded = ops.filter((o) => o.ok)
  const restOk = restOps.filter((o) => o.status >= 200 && o.status < 300)
  // Zero lost: the rev is the start plus every successful mutation, and the log is that long.
  expect(ops).toHaveLength(options.processes * options.perProcess)
  expect(restOps).toHaveLength(options.serve?.writes ?? 0)
  expect(finalRev).toBe(startRev + succeeded.length + restOk.length)
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
  // Every REST write answered 2xx is in the log at the rev it reported, and in the state.
  for (const o of restOk) {
    const e = byRev.get(o.rev!)
    if (!e) throw new Error(`no event at rev ${o.rev} for REST ${JSON.stringify(o)}`)
    expect('annotationId' in e && e.annotationId).toBe(o.id)
    expect(e.type).toBe(o.kind === 'create' ? 'annotation.created' : 'annotation.replied')
    if (o.kind === 'reply') {
      expect(e.type === 'annotation.replied' && e.reply.author).toBe('human')
      expect(checker.getAnnotation(o.id!).replies.map((r) => r.id)).toContain(o.replyId)
    } else checker.getAnnotation(o.id!)
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
  for (const o of restOk) if (o.kind === 'create') writerOf.set(o.id!, 'serve')
  const creators = events.filter((e) => e.type === 'annotation.created').map((e) => writerOf.get((e as { annotationId: string }).annotationId))
  const writerSwitches = creators.filter((w, i) => i > 0 && w !== creators[i - 1]).length
  expect(writerSwitches).toBeGreaterThanOrEqual(options.processes)
  const serveSwitches = creators.filter((w, i) => i > 0 && w !== creators[i - 1] && (w === 'serve' || creators[i - 1] === 'serve')).length
  if (options.serve) expect(serveSwitches).toBeGreaterThanOrEqual(2) // the serve process wrote between the others
  await checker.close()

  let restFigures: ContentionFigures['rest']
  if (serve && sse) {
    // The serve process reached the final rev too, and its event stream carried every event of
    // the run (the contenders' and its own) exactly once, in rev order, as in the log.
    await sse.until((es) => es.some((e) => e.id === String(finalRev)), 30_000, `the SSE event with id ${finalRev}`)
    const health = await request(`${serve.url}/health`)
    expect(health.json).toMatchObject({ status: 'ok', rev: finalRev })
    const got = sse.storeEvents().map((e) => {
      const data = JSON.parse(e.data) as StoreEvent
      expect(e.event).toBe(data.type)
      expect(e.id).toBe(String(data.rev))
      return [data.rev, data.type, 'annotationId' in data ? data.annotationId : data.sessionId, data.at]
    })
    expect(got).toEqual(expectedSeen)
    expect(sse.ended).toBe(false)
    const statuses: Record<string, number> = {}
    for (const o of restOps) statuses[o.status] = (statuses[o.status] ?? 0) + 1
    sse.close()
    const serveExit = await serve.stop()
    expect(serveExit).toBe(0)
    restFigures = {
      attempted: restOps.length,
      succeeded: restOk.length,
      creates: restOk.filter((o) => o.kind === 'create').length,
      replies: restOk.filter((o) => o.kind === 'reply').length,
      statuses,
      sseEvents: got.length,
      serveSwitches,
      serveExit,
    }
  }

  return {
    processes: options.processes,
    attempted: ops.length,
    succeeded: succeeded.length,
    refused: ops.length - succeeded.length,
    startRev,
    finalRev,
    eventsSeenPerProcess: reports[0]!.seen.length,
    writerSwitches,
    ...(restFigures ? { rest: restFigures } : {}),
    ms: Date.now() - started,
  }
}
