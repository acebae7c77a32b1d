/**
 * `npm run bench`: each scenario runs several times; the table shows medians (and p99 where the
 * goal is about tails). The same figures go to bench/results/latest.json.
 * `npm run bench -- --smoke`: tiny sizes, no goals; part of `npm test` so the bench cannot rot.
 * `npm run bench -- --only=wake-cross,query`: a subset, written to bench/results/partial.json.
 * `npm run bench -- --only=frameworks --frameworks=vue,nuxt`: the framework rows for some fixtures.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync, mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openStore } from '../src/index.js'
import { wakeOneProcess } from './serve-scenario.js'
import { postgresBench } from './postgres.js'
import { webhookDelivery } from './webhook.js'
import { pushBench } from './push.js'
import { screenshotTimes } from './screenshot.js'
import { captureTimes } from './capture.js'
import { hostPage, VARIANT_NAMES, type Variant } from './host-page.js'
import { agentSession } from './agent-session.js'
import { channelLatencies } from './channel.js'
import { nextDevStartup } from './next-dev.js'
import { FRAMEWORKS, fixtureInstalled, frameworkBench } from './frameworks.js'
import { CLI, cleanupTemps, median, percentile, realisticAnnotation, round, rssMb, seedStore, sleep, spawnMcp, tempDir, ROOT, type StdioServer } from './lib.js'

export interface Figure {
  scenario: string
  metric: string
  value: number
  unit: string
  /** The goal, as text, and whether it was met (undefined in smoke mode or when there is none). */
  goal?: string
  met?: boolean
}

interface Options {
  smoke: boolean
  only: Set<string> | null
  /** `--frameworks=vue,nuxt`: the framework scenario's subset (all installed fixtures by default). */
  frameworks: Set<string> | null
}

type Goal = { op: '<=' | '>='; limit: number }
const figures: Figure[] = []

function record(opts: Options, scenario: string, metric: string, value: number, unit: string, goal?: Goal): void {
  const f: Figure = { scenario, metric, value: round(value, value < 10 ? 3 : 1), unit }
  if (goal && !opts.smoke) {
    f.goal = `${goal.op} ${goal.limit} ${unit}`
    f.met = goal.op === '<=' ? value <= goal.limit : value >= goal.limit
  }
  figures.push(f)
  process.stderr.write(`  ${scenario} · ${metric}: ${f.value} ${unit}${f.goal ? `  (goal ${f.goal}: ${f.met ? 'met' : 'MISSED'})` : ''}\n`)
}

// ---- 2. wake latency across processes -------------------------------------------------------

async function wakeAcrossProcesses(opts: Options): Promise<void> {
  const runs = opts.smoke ? 3 : 60
  const dir = tempDir()
  const { file, sessionId } = await seedStore(dir, 0)
  // The wake itself: without the burst window (default 250 ms), which the agent-session scenario covers.
  const server = await spawnMcp(dir, ['--burst-ms', '0'])
  const store = await openStore({ file, pollIntervalMs: 0 })
  const latencies: number[] = []
  try {
    for (let i = 0; i < runs; i++) {
      const watching = server.call('watch_annotations', { timeoutMs: 10_000 })
      await sleep(40) // let the call reach the server and start waiting
      const t0 = performance.now()
      const added = await store.addAnnotation(realisticAnnotation(sessionId, i))
      const { result } = await watching
      latencies.push(performance.now() - t0)
      if ((result.structuredContent as { status: string }).status !== 'annotations') throw new Error('watch did not return the annotation')
      await store.acknowledge(added.id)
    }
  } finally {
    await store.close()
    await server.close()
  }
  record(opts, 'wake, across processes', 'p50', median(latencies), 'ms', { op: '<=', limit: 50 })
  record(opts, 'wake, across processes', 'p99', percentile(latencies, 99), 'ms')
  record(opts, 'wake, across processes', 'max', Math.max(...latencies), 'ms', { op: '<=', limit: 600 })
}

// ---- 3. queries over stdio, and paging through everything ------------------------------------

async function query(opts: Options): Promise<void> {
  const sizes = opts.smoke ? [50] : [1_000, 10_000]
  const runs = opts.smoke ? 2 : 15
  for (const n of sizes) {
    const dir = tempDir()
    const { file } = await seedStore(dir, n)
    const addedMs = await catchUpCost(opts, file, n, opts.smoke ? 50 : 3_000)
    const server = await spawnMcp(dir)
    try {
      await server.call('get_all_pending') // warm up
      const first: number[] = []
      let firstBytes = 0
      for (let i = 0; i < runs; i++) {
        const r = await server.call('get_all_pending')
        first.push(r.ms)
        firstBytes = r.bytes
      }
      const walk = async (detail: 'summary' | 'full', limit?: number) => {
        let cursor: string | undefined
        let count = 0
        const pages: { bytes: number }[] = []
        const t0 = performance.now()
        do {
          const r = await server.call('get_all_pending', { detail, ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) })
          const page = r.result.structuredContent as { count: number; nextCursor?: string }
          pages.push(r)
          count += page.count
          cursor = page.nextCursor
        } while (cursor)
        const ms = performance.now() - t0
        if (count !== n) throw new Error(`paging returned ${count} of ${n}`)
        // Bytes are counted after the clock stops: the count is the bench's own work, not the client's.
        const bytes = pages.reduce((sum, p) => sum + p.bytes, 0)
        return { ms, bytes, largest: Math.max(...pages.map((p) => p.bytes)) }
      }
      const all: number[] = []
      let summaryBytes = 0
      let largest = 0
      for (let i = 0; i < runs; i++) {
        const w = await walk('summary')
        all.push(w.ms)
        summaryBytes = w.bytes
        largest = Math.max(largest, w.largest)
      }
      // A client that wants everything can ask for bigger pages: fewer round trips, same bytes.
      const big: number[] = []
      for (let i = 0; i < runs; i++) big.push((await walk('summary', 250)).ms)
      const full = await walk('full')
      const label = `query, ${n.toLocaleString('en')} pending`
      record(opts, label, 'first page p50', median(first), 'ms', { op: '<=', limit: n <= 1_000 ? 5 : 40 })
      // What read-after-write across processes adds to that query, from the same run.
      record(opts, label, 'read-after-write check, share of first page p50', (addedMs / median(first)) * 100, '%', { op: '<=', limit: 5 })
      record(opts, label, 'first page bytes', firstBytes / 1024, 'KiB')
      record(opts, label, 'all pages p50', median(all), 'ms', { op: '<=', limit: n <= 1_000 ? 9 : 90 })
      record(opts, label, 'all pages p50, limit 250', median(big), 'ms')
      record(opts, label, 'all pages bytes', summaryBytes / 1024, 'KiB', n <= 1_000 ? { op: '<=', limit: 190 } : undefined)
      record(opts, label, 'largest response', largest / 1024, 'KiB', { op: '<=', limit: 256 })
      record(opts, label, 'full records, all pages bytes', full.bytes / 1024, 'KiB')
    } finally {
      await server.close()
    }
  }
}

/**
 * What read-after-write costs a query: `store.catchUp()` (an fstat of the open log and
 * a stat of the snapshot; nothing new to read) before the first page of pending annotations,
 * against the same query without it, interleaved. Returns the time it adds (ms), which the caller
 * sets against the first page's p50 through MCP measured in the same run.
 */
async function catchUpCost(opts: Options, file: string, n: number, rounds: number): Promise<number> {
  const store = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
  try {
    const page = () => store.pageAnnotations({ status: 'pending' }, { limit: 50 })
    const plain: number[] = []
    const checked: number[] = []
    for (let i = 0; i < 200; i++) page() // warm up
    for (let i = 0; i < rounds; i++) {
      let t = performance.now()
      page()
      plain.push(performance.now() - t)
      t = performance.now()
      const behind = store.catchUp() // undefined when nothing can be new: the query stays synchronous
      if (behind) await behind
      page()
      checked.push(performance.now() - t)
    }
    const label = `query, ${n.toLocaleString('en')} pending`
    const added = Math.max(0, median(checked) - median(plain))
    record(opts, label, 'first page in-process p50', median(plain) * 1000, 'µs')
    record(opts, label, 'read-after-write check (catchUp: fstat + stat), added p50', added * 1000, 'µs')
    return added
  } finally {
    await store.close()
  }
}

// ---- 4. persisted writes ------------------------------------------------------------------------

async function writes(opts: Options): Promise<void> {
  const sizes = opts.smoke ? [100] : [1_000, 10_000, 100_000]
  const seconds = opts.smoke ? 0.3 : 3
  const rounds = opts.smoke ? 1 : 3
  const inFlight = 256
  const rates: Record<number, number> = {}
  for (const n of sizes) {
    const dir = tempDir()
    const { file, ids } = await seedStore(dir, n)
    const store = await openStore({ file })
    try {
      const perRound: number[] = []
      const durable: number[] = []
      for (let r = 0; r < rounds; r++) {
        let done = 0
        const deadline = performance.now() + seconds * 1000
        const t0 = performance.now()
        const worker = async (w: number) => {
          let k = w
          while (performance.now() < deadline) {
            const started = performance.now()
            await store.reply(ids[(k * 7919) % ids.length]!, { author: 'agent', message: 'Looking into it' })
            durable.push(performance.now() - started)
            done++
            k += inFlight
          }
        }
        await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)))
        perRound.push(done / ((performance.now() - t0) / 1000))
      }
      rates[n] = median(perRound)
      const label = `writes, ${n.toLocaleString('en')} in store`
      record(opts, label, 'mutations/s', rates[n]!, '/s', { op: '>=', limit: 5_000 })
      record(opts, label, 'durable p50', median(durable), 'ms')
      record(opts, label, 'durable p99', percentile(durable, 99), 'ms', { op: '<=', limit: 100 })
    } finally {
      await store.close()
    }
  }
  if (!opts.smoke) record(opts, 'writes', 'throughput 100k / 1k', rates[100_000]! / rates[1_000]!, '×', { op: '>=', limit: 0.5 })
}

// ---- 5. start-up ----------------------------------------------------------------------------

async function startup(opts: Options): Promise<void> {
  const runs = opts.smoke ? 2 : 15
  const dir = tempDir()
  await seedStore(dir, 100)
  // Server readiness: spawn → the tools/list answer's bytes arrive (initialize, initialized and
  // tools/list are written at once, as a client does), in turns with a bare `node -e 0`, so that
  // load on the machine weighs on both alike.
  const raw: number[] = []
  const bareBeside: number[] = []
  for (let i = 0; i < runs; i++) {
    bareBeside.push(await timedExit(['-e', '0']))
    const t0 = performance.now()
    const child = spawn(process.execPath, [CLI, 'mcp'], { cwd: dir, stdio: ['pipe', 'pipe', 'ignore'] })
    for (const message of [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ])
      child.stdin.write(JSON.stringify(message) + '\n')
    let out = ''
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d
        if (/"id":2[,}]/.test(out)) resolve()
      })
      child.on('exit', () => reject(new Error(`marginalia mcp exited before answering: ${out.slice(0, 500)}`)))
    })
    raw.push(performance.now() - t0)
    child.stdin.end()
    await once(child, 'exit')
  }
  // The same through the SDK's client (its own spawn, handshake and response validation included).
  const sdk: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    const server: StdioServer = await spawnMcp(dir)
    await server.client.listTools()
    sdk.push(performance.now() - t0)
    await server.close()
  }
  record(opts, 'start-up', 'spawn → tools/list answered p50', median(raw), 'ms', { op: '<=', limit: 250 })
  record(opts, 'start-up', 'spawn → tools/list / node -e 0 (in turns)', median(raw) / median(bareBeside), '×')
  record(opts, 'start-up', 'same, through the SDK client p50', median(sdk), 'ms')
  // `marginalia --version` against a bare `node -e 0`, run in turns so that load on the machine
  // weighs on both alike: the version path loads nothing but the version (src/cli/main.ts).
  const bare: number[] = []
  const version: number[] = []
  for (let i = 0; i < runs * 2; i++) {
    bare.push(await timedExit(['-e', '0']))
    version.push(await timedExit([CLI, '--version']))
  }
  record(opts, 'start-up', 'node -e 0 p50', median(bare), 'ms')
  record(opts, 'start-up', 'marginalia --version p50', median(version), 'ms')
  record(opts, 'start-up', 'marginalia --version / node -e 0', median(version) / median(bare), '×', { op: '<=', limit: 1.5 })
}

/** Spawn → exit of `node <args>`, in ms. */
async function timedExit(args: string[]): Promise<number> {
  const t0 = performance.now()
  const child = spawn(process.execPath, args, { stdio: 'ignore' })
  await once(child, 'exit')
  return performance.now() - t0
}

// ---- 6. memory ------------------------------------------------------------------------------

async function memory(opts: Options): Promise<void> {
  const n = opts.smoke ? 1_000 : 100_000
  const dir = tempDir()
  await seedStore(dir, n)
  const server = await spawnMcp(dir)
  try {
    await server.call('get_all_pending')
    await sleep(opts.smoke ? 100 : 2_000)
    record(opts, `memory, ${n.toLocaleString('en')} annotations`, 'server RSS', await rssMb(server.pid), 'MB', { op: '<=', limit: 300 })
  } finally {
    await server.close()
  }
}

/** The dev-server source-marking transform on a 2 000-line TSX file: parse + mark + source map. */
async function transform(opts: Options): Promise<void> {
  const { markModule } = await import('../src/integrations/shared/source-marks.js')
  const block = (i: number) =>
    [
      `export function Row${i}({ items, onPick }: { items: string[]; onPick: (s: string) => void }) {`,
      `  const label = items.length > 0 ? \`\${items.length} items\` : 'none'`,
      '  return (',
      `    <section className="row row-${i}">`,
      '      <h3 title={label}>{label}</h3>',
      '      <ul>',
      '        {items.map((it) => (',
      '          <li key={it} onClick={() => onPick(it)}>',
      '            <span className="name">{it}</span>',
      '          </li>',
      '        ))}',
      '      </ul>',
      '      <Button variant="ghost">More</Button>',
      '    </section>',
      '  )',
      '}',
      '',
      '',
      '',
      '',
    ].join('\n')
  const code = Array.from({ length: 100 }, (_, i) => block(i)).join('\n')
  const lines = code.split('\n').length
  const runs = opts.smoke ? 5 : 50
  const times: number[] = []
  for (let i = 0; i < runs + 3; i++) {
    const t = performance.now()
    const out = await markModule(code, '/app/src/Rows.tsx', '/app')
    if (i >= 3) times.push(performance.now() - t)
    if (!out?.code.includes('data-marginalia-source="src/Rows.tsx:4:5"')) throw new Error('the transform did not mark the file')
  }
  record(opts, `source marks, ${lines.toLocaleString('en')}-line TSX`, 'transform', round(median(times)), 'ms', { op: '<=', limit: 20 })
}

// ---- main -----------------------------------------------------------------------------------

// ---- the scripted agent session: what the model reads -----------------------------

/** Measured before the tools' surface was made lean, with `tsx bench/agent-session.ts <main's dist/marginalia.mjs>`. */
const SESSION_BEFORE = { toolCalls: 13, resultTextBytes: 6_422, toolsListBytes: 61_941 }

async function agentSessionScenario(opts: Options): Promise<void> {
  // The long watch at the end takes the server's max wait (55 s): not in smoke runs.
  const f = await agentSession(CLI, { longWait: !opts.smoke })
  record(opts, 'agent session', 'tool calls', f.toolCalls, 'calls', { op: '<=', limit: SESSION_BEFORE.toolCalls - 1 })
  record(opts, 'agent session', 'text read, without tools/list', f.resultTextBytes, 'bytes', { op: '<=', limit: Math.floor(0.4 * SESSION_BEFORE.resultTextBytes) })
  record(opts, 'agent session', 'tools/list', f.toolsListBytes, 'bytes', { op: '<=', limit: Math.floor(0.25 * SESSION_BEFORE.toolsListBytes) })
  record(opts, 'agent session', 'text read, with tools/list', f.totalBytes, 'bytes')
  record(opts, 'agent session', 'longest call (SDK clients time out at 60 s)', f.longestCallMs, 'ms', { op: '<=', limit: f.clientTimeoutMs - 1_000 })
}

const SCENARIOS: Record<string, (opts: Options) => Promise<void>> = {
  'wake-one': async (opts) => {
    const r = await wakeOneProcess(opts.smoke)
    record(opts, 'wake, one process', 'p50', r.p50, 'ms', { op: '<=', limit: 5 })
    record(opts, 'wake, one process', 'p99', r.p99, 'ms', { op: '<=', limit: 20 })
    record(opts, 'wake, one process', 'p50 when POSTing with fetch()', r.fetchP50, 'ms')
  },
  'wake-cross': wakeAcrossProcesses,
  channel: async (opts) => {
    const r = await channelLatencies(opts.smoke ? 3 : 60)
    record(opts, 'person → channel notification (marginalia mcp --channel, across processes)', 'p50', r.p50, 'ms', { op: '<=', limit: 1_000 })
    record(opts, 'person → channel notification (marginalia mcp --channel, across processes)', 'p99', r.p99, 'ms')
    record(opts, 'person → channel notification (marginalia mcp --channel, across processes)', 'content bytes (largest)', r.contentBytes, 'B')
  },
  'agent-session': agentSessionScenario,
  query,
  writes,
  startup,
  memory,
  transform,
  webhook: async (opts) => {
    const r = await webhookDelivery(opts.smoke ? 3 : 100)
    record(opts, 'person → webhook delivered (healthy loopback receiver)', 'p50', r.p50, 'ms', { op: '<=', limit: 100 })
    record(opts, 'person → webhook delivered (healthy loopback receiver)', 'p95', r.p95, 'ms')
  },
  postgres: (opts) => postgresBench(opts.smoke, (...args) => record(opts, ...args)),
  push: (opts) => pushBench(opts.smoke, (...args) => record(opts, ...args)),
  // Minutes of Next.js compiles: not in the smoke run (npm test), which has no goals anyway.
  'next-dev': async (opts) => {
    if (opts.smoke) return
    const r = await nextDevStartup(3)
    record(opts, 'next dev start-up (create-next-app, Turbopack, cold)', 'spawn → first page, without Marginalia p50', r.without, 'ms')
    record(opts, 'next dev start-up (create-next-app, Turbopack, cold)', 'same, set up by init p50', r.with, 'ms')
    record(opts, 'next dev start-up (create-next-app, Turbopack, cold)', 'overhead', ((r.with - r.without) / r.without) * 100, '%', { op: '<=', limit: 10 })
  },
  // Minutes of dev-server starts and Chromium per framework: not in the smoke run either.
  frameworks: async (opts) => {
    if (opts.smoke) return
    const unknown = opts.frameworks ? [...opts.frameworks].filter((n) => !FRAMEWORKS.some((f) => f.name === n)) : []
    if (unknown.length > 0) throw new Error(`unknown framework(s) ${unknown.join(', ')}; known: ${FRAMEWORKS.map((f) => f.name).join(', ')}`)
    for (const fw of FRAMEWORKS) {
      if (opts.frameworks && !opts.frameworks.has(fw.name)) continue
      if (!fixtureInstalled(fw.name)) {
        process.stderr.write(`  ${fw.name}: skipped (the fixture is not installed: npm run fixtures ${fw.name})\n`)
        continue
      }
      const r = await frameworkBench(fw, Number(process.env.BENCH_FRAMEWORK_RUNS) || 3)
      const label = `${fw.name} dev (fixture starter, cold)`
      record(opts, label, 'empty starter → first annotation read by the agent p50', r.firstAnnotation, 'ms')
      record(opts, label, 'spawn → first page 200, without Marginalia p50', r.without, 'ms')
      record(opts, label, 'same, set up by init p50', r.with, 'ms')
      record(opts, label, 'overhead', ((r.with - r.without) / r.without) * 100, '%', { op: '<=', limit: 10 })
    }
  },
  screenshot: async (opts) => {
    const r = await screenshotTimes(opts.smoke ? 2 : 20)
    if (!r) return void process.stderr.write('  screenshot: skipped (no Chromium)\n')
    record(opts, 'element screenshot (Chromium)', 'p50', r.p50, 'ms', { op: '<=', limit: 300 })
    record(opts, 'element screenshot (Chromium)', 'p95', r.p95, 'ms')
    record(opts, 'element screenshot (Chromium)', 'size', r.bytes / 1024, 'KB', { op: '<=', limit: 400 })
  },
  'host-page': async (opts) => {
    // BENCH_HOST_ROUNDS (default 5); BENCH_HOST_PARTS=loads or recorder: one half of the scenario; main: only the main-thread row's own loads.
    const parts = process.env.BENCH_HOST_PARTS
    // BENCH_RECORDER_SECONDS: how long each round of ordinary use lasts (default 60).
    // BENCH_HOST_MAIN_ROUNDS: rounds of the main-thread row's own loads (default 3 × BENCH_HOST_ROUNDS).
    const r = await hostPage({ smoke: opts.smoke, rounds: opts.smoke ? 1 : Number(process.env.BENCH_HOST_ROUNDS) || 5, mainRounds: Number(process.env.BENCH_HOST_MAIN_ROUNDS) || undefined, parts: parts === 'loads' || parts === 'recorder' || parts === 'main' ? parts : undefined, recorderSeconds: opts.smoke ? 5 : Number(process.env.BENCH_RECORDER_SECONDS) || undefined })
    if (!r) return void process.stderr.write('  host-page: skipped (no Chromium)\n')
    process.stderr.write(`  host-page: React Grab: ${r.reactGrab}\n`)
    const tools: Variant[] = ['tag', 'snippet']
    const hostLabel = { 'static-100': 'static page, 100 rows', 'static-1k': opts.smoke ? 'static page, 100 rows' : 'static page, 1 000 rows', 'static-10k': 'static page, 10 000 rows', react: 'React dashboard (production)' } as const
    // The main-thread row: loads in a browser without the Network and Runtime domains on (see hostPage).
    for (const [host, plain] of Object.entries(r.plainMain) as [keyof typeof hostLabel, NonNullable<(typeof r.plainMain)['react']>][]) {
      const base = plain.none
      if (!base) continue
      const label = `host page, ${hostLabel[host]}`
      record(opts, label, `no tool: main thread, load + 1.5 s (${base.loads} loads)`, base.ms, 'ms')
      const range = r.plainNoToolRange[host]
      if (range) record(opts, label, 'no tool: main thread, load + 1.5 s, highest − lowest load', range.max - range.min, 'ms')
      for (const [variant, f] of Object.entries(plain) as [Variant, { ms: number; loads: number }][]) {
        if (variant === 'none') continue
        const goal = tools.includes(variant) && (host === 'static-1k' || host === 'static-10k') ? { op: '<=' as const, limit: 15 } : undefined
        record(opts, label, `${VARIANT_NAMES[variant]}: main thread, load + 1.5 s, added`, f.ms - base.ms, 'ms', goal)
      }
    }
    for (const [host, byVariant] of Object.entries(r.loads) as [keyof typeof hostLabel, NonNullable<(typeof r.loads)['react']>][]) {
      const base = byVariant.none
      if (!base) continue
      const label = `host page, ${hostLabel[host]}`
      const isStatic = host !== 'react'
      record(opts, label, 'no tool: main thread, load + 1.5 s, DevTools attached (Network, Runtime)', base.mainMs, 'ms')
      const range = r.noToolRange[host]
      if (range) record(opts, label, 'no tool: main thread, load + 1.5 s, DevTools attached, highest − lowest load', range.max - range.min, 'ms')
      record(opts, label, 'no tool: JS heap', base.heapMB, 'MB')
      record(opts, label, 'no tool: idle main thread', base.idleMsPerS, 'ms/s')
      record(opts, label, 'no tool: input + keydown + click', base.eventUs, 'µs')
      record(opts, label, 'no tool: console.warn call', base.consoleUs, 'µs')
      record(opts, label, 'no tool: fetch call', base.fetchUs, 'µs')
      record(opts, label, 'no tool: input + keydown + click, DevTools attached', base.devtoolsEventUs, 'µs')
      record(opts, label, 'no tool: console.warn call, DevTools attached', base.devtoolsConsoleUs, 'µs')
      record(opts, label, 'no tool: fetch call, DevTools attached', base.devtoolsFetchUs, 'µs')
      for (const [variant, f] of Object.entries(byVariant) as [Variant, NonNullable<(typeof byVariant)['none']>][]) {
        if (variant === 'none') continue
        const ours = tools.includes(variant)
        const goal = (limit: number, when = true) => (ours && when ? { op: '<=' as const, limit } : undefined)
        const name = VARIANT_NAMES[variant]
        record(opts, label, `${name}: main thread, load + 1.5 s, added, DevTools attached (Network, Runtime)`, f.mainMs - base.mainMs, 'ms')
        if (variant === 'empty') continue
        record(opts, label, `${name}: its own main-thread time, load + 1.5 s (CPU samples in its scripts)`, f.ownMs, 'ms')
        record(opts, label, `${name}: bytes fetched for the tool before Annotate (as transferred)`, f.toolKB, 'KB', goal(30))
        record(opts, label, `${name}: requests for the tool before Annotate`, f.toolRequests, '')
        record(opts, label, `${name}: JS heap, added`, f.heapMB - base.heapMB, 'MB', goal(1.5))
        record(opts, label, `${name}: idle main thread, added`, f.idleMsPerS - base.idleMsPerS, 'ms/s', goal(0.5, isStatic))
        record(opts, label, `${name}: input + keydown + click, added`, f.eventUs - base.eventUs, 'µs', goal(10))
        record(opts, label, `${name}: console.warn call, added`, f.consoleUs - base.consoleUs, 'µs', goal(5))
        record(opts, label, `${name}: fetch call, added`, f.fetchUs - base.fetchUs, 'µs', goal(20))
        record(opts, label, `${name}: input + keydown + click, added, DevTools attached`, f.devtoolsEventUs - base.devtoolsEventUs, 'µs')
        record(opts, label, `${name}: console.warn call, added, DevTools attached`, f.devtoolsConsoleUs - base.devtoolsConsoleUs, 'µs')
        record(opts, label, `${name}: fetch call, added, DevTools attached`, f.devtoolsFetchUs - base.devtoolsFetchUs, 'µs')
      }
    }
    for (const [variant, a] of Object.entries(r.annotate) as [Variant, NonNullable<(typeof r.annotate)['tag']>][]) {
      const label = `host page, ${hostLabel['static-1k']}, ${VARIANT_NAMES[variant]}`
      record(opts, label, 'Annotate → picker ready, cold (fresh context)', a.pickerColdMs, 'ms', { op: '<=', limit: 100 })
      record(opts, label, 'Annotate → picker ready, cached (after a reload)', a.pickerCachedMs, 'ms', { op: '<=', limit: 30 })
      if (!opts.smoke) {
        record(opts, label, 'Send → annotation.created in the store, Screenshot ticked', a.sendMs, 'ms')
        record(opts, label, 'same: the page\'s long tasks meanwhile (the screenshot drawn on its main thread)', a.sendLongTasksMs, 'ms')
        record(opts, label, 'same: the longest of them', a.sendLongestTaskMs, 'ms')
      }
      record(opts, label, 'Send → annotation.created in the store, Screenshot unticked', a.sendNoScreenshotMs, 'ms')
    }
    if (r.recorder) {
      const label = 'steps recorder, React dashboard, scripted use'
      record(opts, label, 'actions', r.recorder.actionsPerMin, '/min')
      record(opts, label, 'recorder alone (steps.ts): own main-thread time', r.recorder.stepsSelfMsPerMin, 'ms/min', { op: '<=', limit: 1 })
      record(opts, label, 'early.js (page log + recorder): own main-thread time', r.recorder.earlySelfMsPerMin, 'ms/min')
      record(opts, label, 'the least a recorder reads (its listeners, reading only trust, target, key, address): own main-thread time', r.recorder.floorSelfMsPerMin, 'ms/min')
      record(opts, label, 'recorder alone: TaskDuration with − without (noisy)', r.recorder.taskDeltaStepsMsPerMin, 'ms/min')
      record(opts, label, 'early.js: TaskDuration with − without (noisy)', r.recorder.taskDeltaEarlyMsPerMin, 'ms/min')
    }
  },
  capture: async (opts) => {
    const r = await captureTimes(opts.smoke ? 2 : 20)
    if (!r) return void process.stderr.write('  capture: skipped (no Chromium)\n')
    record(opts, 'capture, tool call to image (Chromium)', 'p50', r.p50, 'ms', { op: '<=', limit: 500 })
    record(opts, 'capture, tool call to image (Chromium)', 'p95', r.p95, 'ms')
  },
}

function table(): string {
  const rows = figures.map((f) => `| ${f.scenario} | ${f.metric} | ${f.value} ${f.unit} | ${f.goal ?? ''} | ${f.met === undefined ? '' : f.met ? 'met' : '**missed**'} |`)
  return ['| scenario | metric | median | goal | |', '|---|---|---|---|---|', ...rows].join('\n')
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2)
  const onlyArg = argv.find((a) => a.startsWith('--only='))
  const frameworksArg = argv.find((a) => a.startsWith('--frameworks='))
  const opts: Options = {
    smoke: argv.includes('--smoke'),
    only: onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : null,
    frameworks: frameworksArg ? new Set(frameworksArg.slice('--frameworks='.length).split(',')) : null,
  }
  const unknown = opts.only ? [...opts.only].filter((s) => !(s in SCENARIOS)) : []
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`)
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memGiB: round(os.totalmem() / 2 ** 30, 1), node: process.version, platform: `${os.platform()} ${os.release()}` }
  process.stderr.write(`marginalia bench${opts.smoke ? ' (smoke)' : ''} on ${machine.cpus} × ${machine.cpu}, node ${machine.node}\n`)
  try {
    for (const [name, run] of Object.entries(SCENARIOS)) {
      if (opts.only && !opts.only.has(name)) continue
      process.stderr.write(`${name} …\n`)
      await run(opts)
    }
  } finally {
    cleanupTemps()
  }
  const out = { date: new Date().toISOString(), smoke: opts.smoke, machine, figures }
  // A subset never replaces the full run's figures.
  const file = path.join(ROOT, 'bench', 'results', opts.smoke ? 'smoke.json' : opts.only ? 'partial.json' : 'latest.json')
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n')
  process.stdout.write(table() + '\n')
  process.stderr.write(`written ${path.relative(ROOT, file)}\n`)
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exitCode = 1
})
