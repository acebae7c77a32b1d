/**
 * What Marginalia costs the page it sits on, in Chromium (playwright-core, /usr/bin/chromium), on
 * two hosts: a static page (a table of 1 000 rows, and of 10 000, no script of its own) and a
 * production React dashboard (built here once with Vite and @vitejs/plugin-react: 1 000 rows, a
 * 100 ms clock, a poll every 500 ms with a console line each). Variants: no tool, the overlay's
 * tag (`<script src=…/overlay.js defer>`), the head snippet (`loader.js`, which starts the page log
 * and the steps' recorder and then loads the overlay), and React Grab's published script when npm
 * can install it into bench/.cache (never a dependency). Rounds are interleaved (every variant of
 * every host in each round, the starting variant rotating), each load in a fresh browser context
 * (nothing cached); the figures are medians.
 *
 * What is measured, per load:
 *   - main-thread time from navigation to load + 1.5 s: CDP `Performance.getMetrics` TaskDuration,
 *     the renderer main thread's busy time, before and after. The row with a goal comes from loads
 *     of their own (`plainMainMs`, 3 × the rounds, a 100-row page too) in a browser driven over a
 *     bare DevTools pipe with only the Page and Performance domains on; the same figure from the
 *     loads Playwright drives (its Network and Runtime domains on) is reported beside it;
 *   - bytes fetched for the tool before anyone annotates: every response from the Marginalia server
 *     (or React Grab's script) as transferred (compressed as served, headers included), from the
 *     navigation until the Annotate click — the load, 1.5 s, the idle window — whatever the overlay
 *     fetches by then (its core, chunks prefetched while idle, the live connection);
 *   - JS heap used after a forced garbage collection;
 *   - idle main thread: TaskDuration over a window with no interaction, per second;
 *   - an input + keydown + click (synthetic, dispatched in a loop in the page), a console.warn call
 *     (the wrapped level) and a fetch call to the host's own endpoint (the synchronous call, the
 *     requests awaited after), each µs per call.
 * Then, for the overlay tag and the head snippet: Annotate → picker ready (a real click on the
 * dock's Annotate button until a real mouse move over the table shows the picker's highlight; cold
 * in the fresh context, cached after a reload of it) and Send → the annotation in the store (the
 * click on Send until the store — the server's, in this process — emits `annotation.created` for
 * that comment, the event its SSE stream and MCP wake-ups are fed from).
 *
 * The steps recorder's cost per minute of ordinary use: on the React dashboard, scripted clicks on
 * rows, typing in a field, Tab, wheel scrolls and SPA route changes (real input through CDP, so the
 * events are trusted and recorded) for a fixed time, with the recorder alone (src/browser/early/steps.ts
 * bundled to its own script, unminified so its functions are named) and with `early.js` (page log +
 * recorder), against none. The figure with a goal is the main-thread time in the tool's own code,
 * from the V8 sampling profiler (50 µs): the samples whose innermost script frame is the tool's
 * script (DOM calls made by that code included; not the page's own calls a wrapper of the page
 * log passes on, such as its polling `fetch`), each counted as one interval. Beside them, the least
 * a recorder of these steps reads: the same listeners, each reading only its event's trust and
 * target (a key press: its key; a route change: the address).
 * TaskDuration with minus without over the same script is reported beside it; at these sizes it
 * is noise.
 *
 * Micro costs are the median of short batches in the page; on a shared machine a batch the OS
 * preempts is an outlier. `uptime` before a run says how shared the machine was.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { build as esbuild } from 'esbuild'
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core'
import { filter, firstValueFrom } from 'rxjs'
import { createMemoryStore, startHttpServer, type HttpServer } from '../src/index.js'
import { headSnippet } from '../src/integrations/shared/loader-script.js'
import { launchPipeBrowser, type PipeBrowser } from './cdp-pipe.js'
import { median, ROOT, sleep } from './lib.js'

const CACHE = path.join(ROOT, 'bench', '.cache')
const REACT_GRAB_VERSION = '0.2.0'

/** `static-100` is measured by the main-thread row's loads only: a page whose own layout is small beside the tool's cost. */
export type Host = 'static-100' | 'static-1k' | 'static-10k' | 'react'
export type Variant = 'none' | 'tag' | 'snippet' | 'react-grab' | 'empty' | 'empty-x'
export const VARIANT_NAMES: Record<Variant, string> = {
  none: 'no tool',
  tag: 'overlay tag',
  snippet: 'head snippet',
  'react-grab': `React Grab ${REACT_GRAB_VERSION}`,
  empty: 'an empty deferred script (the harness\'s floor)',
  'empty-x': 'an empty deferred script from another origin (the floor of a tag like the overlay\'s)',
}

export interface LoadFigures {
  mainMs: number
  toolKB: number
  toolRequests: number
  heapMB: number
  idleMsPerS: number
  /** Micro costs in a browser no DevTools client is attached to (see `microCosts`). */
  eventUs: number
  consoleUs: number
  fetchUs: number
  /** The same, in the page the bench drives over the DevTools protocol. */
  devtoolsEventUs: number
  devtoolsConsoleUs: number
  devtoolsFetchUs: number
  /** The tool's own main-thread time over the same window, from a CPU profile of a load of its own (0 without a tool). */
  ownMs: number
}

export interface HostPageResult {
  /** host → variant → medians of the load figures. */
  loads: Partial<Record<Host, Partial<Record<Variant, LoadFigures>>>>
  /** host → the no-tool loads' main-thread time, lowest and highest: how far one load moves from the next with nothing added. */
  noToolRange: Partial<Record<Host, { min: number; max: number }>>
  /** host → variant → main-thread time of the loads in a browser without the Network and Runtime domains (`plainMainMs`), median, and how many loads. */
  plainMain: Partial<Record<Host, Partial<Record<Variant, { ms: number; loads: number }>>>>
  /** host → the same loads without a tool, lowest and highest. */
  plainNoToolRange: Partial<Record<Host, { min: number; max: number }>>
  /** variant → medians, on the static 1 000-row page. */
  annotate: Partial<Record<Variant, { pickerColdMs: number; pickerCachedMs: number; sendMs: number; sendLongTasksMs: number; sendLongestTaskMs: number; sendNoScreenshotMs: number }>>
  /** The steps recorder on the React dashboard, per minute of scripted use. */
  recorder?: { actionsPerMin: number; stepsSelfMsPerMin: number; earlySelfMsPerMin: number; floorSelfMsPerMin: number; taskDeltaStepsMsPerMin: number; taskDeltaEarlyMsPerMin: number }
  reactGrab: string
}

export interface HostPageOptions {
  smoke: boolean
  rounds: number
  /** Rounds of the main-thread row's own loads (`plainMainMs`; default: 3 × rounds): cheap loads, and the row moves most from one load to the next. */
  mainRounds?: number | undefined
  /** The loads (and Annotate, Send), the recorder's cost, or both (default); `main`: only the main-thread row's own loads. */
  parts?: 'loads' | 'recorder' | 'main' | undefined
  /** How long each round of ordinary use lasts, s (default 60: a minute of use, its one-off costs such as compiling the listeners counted once). */
  recorderSeconds?: number | undefined
}

// ---- the hosts -------------------------------------------------------------------------------

function tablePage(rows: number, head: string): string {
  const body: string[] = []
  for (let i = 0; i < rows; i++) body.push(`<tr><td>${i + 1}</td><td>Item ${i + 1}</td><td>${(i * 37) % 1000}</td><td>${['open', 'paid', 'sent'][i % 3]}</td></tr>`)
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders</title>${head}
<style>body{font:14px system-ui,sans-serif;margin:16px}table{border-collapse:collapse}td{border-bottom:1px solid #ddd;padding:4px 10px}</style></head>
<body><h1>Orders</h1><input id="search" placeholder="Search"><table id="rows"><tbody>${body.join('')}</tbody></table></body></html>`
}

const DASHBOARD_APP = `import { useEffect, useState } from 'react'
import { createRoot } from 'react-dom/client'

const ROWS = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, name: 'Item ' + (i + 1), qty: (i * 7) % 17, price: (i * 37) % 1000 }))

function Clock() {
  const [now, setNow] = useState(Date.now())
  useEffect(() => { const h = setInterval(() => setNow(Date.now()), 100); return () => clearInterval(h) }, [])
  return <span id="clock">{new Date(now).toISOString()}</span>
}

function App() {
  const [route, setRoute] = useState(location.pathname)
  const [polls, setPolls] = useState(0)
  const [query, setQuery] = useState('')
  const [picked, setPicked] = useState(0)
  useEffect(() => {
    const h = setInterval(async () => {
      const r = await fetch('/api/status')
      const j = await r.json()
      console.log('poll', j.n)
      setPolls(j.n)
    }, 500)
    const back = () => setRoute(location.pathname)
    addEventListener('popstate', back)
    return () => { clearInterval(h); removeEventListener('popstate', back) }
  }, [])
  const go = (e, to) => { e.preventDefault(); history.pushState(null, '', to); setRoute(to) }
  return (
    <div>
      <header><h1>Dashboard</h1> <Clock /> <span id="polls">{polls}</span> <span id="picked">{picked}</span></header>
      <nav>
        <a id="nav-orders" href="/react" onClick={(e) => go(e, '/react')}>Orders</a> <a id="nav-stats" href="/react/stats" onClick={(e) => go(e, '/react/stats')}>Stats</a>
      </nav>
      <p>{route}</p>
      <label>Search <input id="search" value={query} onChange={(e) => setQuery(e.target.value)} /></label>
      <table id="rows"><tbody>
        {ROWS.map((r) => (
          <tr key={r.id}><td>{r.id}</td><td>{r.name}</td><td>{r.qty}</td><td>{r.price}</td><td><button onClick={() => setPicked(r.id)}>Open</button></td></tr>
        ))}
      </tbody></table>
    </div>
  )
}

createRoot(document.getElementById('root')).render(<App />)
`

/** Build the dashboard with Vite (production), once per run; returns its dist directory. */
async function buildDashboard(): Promise<string> {
  const dir = path.join(CACHE, 'dashboard')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(path.join(dir, 'src'), { recursive: true })
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard</title><!--tool--></head><body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body></html>')
  writeFileSync(path.join(dir, 'src', 'main.jsx'), DASHBOARD_APP)
  const { build } = await import('vite')
  const react = (await import('@vitejs/plugin-react')).default
  await build({ root: dir, logLevel: 'silent', configFile: false, plugins: [react()], build: { outDir: path.join(dir, 'dist'), emptyOutDir: true } })
  return path.join(dir, 'dist')
}

/** React Grab's published browser script, installed into bench/.cache (not a dependency); undefined when npm cannot get it. */
function reactGrabScript(): string | undefined {
  const dir = path.join(CACHE, 'react-grab')
  const file = path.join(dir, 'node_modules', 'react-grab', 'dist', 'index.global.js')
  if (!existsSync(file)) {
    try {
      mkdirSync(dir, { recursive: true })
      writeFileSync(path.join(dir, 'package.json'), '{"name":"react-grab-bench","private":true}\n')
      execFileSync('npm', ['install', `react-grab@${REACT_GRAB_VERSION}`, '--no-audit', '--no-fund', '--ignore-scripts', '--no-save'], { cwd: dir, stdio: 'ignore', timeout: 120_000 })
    } catch {
      return undefined
    }
  }
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined
}

interface HostServer {
  origin: string
  /** The micro costs a page loaded with `?micro=ID` posts (`MICRO_PAGE_SCRIPT`). */
  microResult(id: string): Promise<MicroCosts>
  close(): Promise<void>
}

type MicroCosts = { eventUs: number; consoleUs: number; fetchUs: number }

function send(req: IncomingMessage, res: ServerResponse, type: string, body: string | Buffer, compress = false): void {
  const headers: Record<string, string> = { 'Content-Type': type, 'Cache-Control': 'no-store' }
  if (compress && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    headers['Content-Encoding'] = 'gzip'
    body = gzipSync(body)
  }
  res.writeHead(200, headers).end(body)
}

async function serveHosts(smoke: boolean, marginalia: string, dashboard: string | undefined, reactGrab: string | undefined, stepsJs: string, earlyJs: string): Promise<HostServer> {
  const tools: Record<Variant, string> = {
    none: '',
    tag: `<script src="${marginalia}/overlay.js" defer></script>`,
    snippet: headSnippet({ server: marginalia, command: 'npx marginalia serve' }),
    'react-grab': '<script src="/react-grab.js" crossorigin="anonymous"></script>',
    empty: '<script src="/empty.js" defer></script>',
    // The same server under another name: another origin, as the Marginalia server is the page's (its port set once it listens).
    'empty-x': '<script src="http://localhost:PORT/empty.js" defer></script>',
  }
  const recorders: Record<string, string> = { none: '', steps: '<script src="/steps.js"></script>', early: '<script src="/early.js"></script>', floor: '<script src="/floor.js"></script>' }
  const pages = new Map<string, string>()
  for (const [variant, tag] of Object.entries(tools)) {
    pages.set(`/static-100/${variant}`, tablePage(100, tag))
    pages.set(`/static-1k/${variant}`, tablePage(smoke ? 100 : 1_000, tag))
    pages.set(`/static-10k/${variant}`, tablePage(10_000, tag))
  }
  const dashboardHtml = dashboard ? readFileSync(path.join(dashboard, 'index.html'), 'utf8') : ''
  let polls = 0
  const micro = new Map<string, (costs: MicroCosts) => void>()
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const p = url.pathname
    if (p === '/micro-result' && req.method === 'POST') {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        micro.get(url.searchParams.get('id') ?? '')?.(JSON.parse(body) as MicroCosts)
        res.writeHead(204).end()
      })
      return
    }
    // A page asked for with ?micro=ID measures its micro costs itself and posts them (no DevTools client to ask it).
    const microId = url.searchParams.get('micro')
    const withMicro = (html: string) => (microId ? `${html}<script>${MICRO_PAGE_SCRIPT(microId)}</script>` : html)
    if (p === '/blank') return send(req, res, 'text/html', '<!doctype html><title>blank</title>')
    if (p === '/ping') return send(req, res, 'text/plain', 'ok')
    if (p === '/api/status') return send(req, res, 'application/json', JSON.stringify({ n: ++polls }))
    if (p === '/react-grab.js' && reactGrab) return send(req, res, 'text/javascript', reactGrab, true)
    if (p === '/steps.js') return send(req, res, 'text/javascript', stepsJs)
    if (p === '/early.js') return send(req, res, 'text/javascript', earlyJs)
    if (p === '/floor.js') return send(req, res, 'text/javascript', FLOOR_JS)
    if (p === '/empty.js') return send(req, res, 'text/javascript', '')
    // /static-1k/tag/a3: the same page at an address of its own (a load that annotates leaves its annotations there).
    const page = pages.get(p.replace(/\/a\d+$/, ''))
    if (page) return send(req, res, 'text/html; charset=utf-8', withMicro(page))
    if (dashboard) {
      const m = /^\/react\/(none|tag|snippet|react-grab|rec-none|rec-steps|rec-early|rec-floor)(\/.*)?$/.exec(p)
      if (m) {
        const v = m[1]!
        const tag = v.startsWith('rec-') ? recorders[v.slice(4)]! : tools[v as Variant]
        return send(req, res, 'text/html; charset=utf-8', withMicro(dashboardHtml.replace('<!--tool-->', tag)))
      }
      if (p.startsWith('/assets/')) {
        const file = path.join(dashboard, path.posix.normalize(p))
        if (file.startsWith(dashboard) && existsSync(file)) return send(req, res, 'text/javascript', readFileSync(file), true)
      }
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  for (const [key, html] of pages) if (key.endsWith('/empty-x')) pages.set(key, html.replace('PORT', String(port)))
  return {
    origin: `http://127.0.0.1:${port}`,
    microResult: (id) => new Promise((resolve) => micro.set(id, resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

// ---- one load ---------------------------------------------------------------------------------

type Metrics = Record<string, number>

async function metrics(cdp: CDPSession): Promise<Metrics> {
  const { metrics: list } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }
  return Object.fromEntries(list.map((m) => [m.name, m.value]))
}

/** Bytes as transferred of every response whose URL `isTool` accepts, from now on. */
function countTransfers(cdp: CDPSession, isTool: (url: string) => boolean): { kb(): number; requests(): number } {
  const urls = new Map<string, string>()
  const streamed = new Map<string, number>()
  const finished = new Map<string, number>()
  cdp.on('Network.requestWillBeSent', (e: { requestId: string; request: { url: string } }) => {
    if (isTool(e.request.url)) urls.set(e.requestId, e.request.url)
  })
  cdp.on('Network.dataReceived', (e: { requestId: string; encodedDataLength: number }) => {
    if (urls.has(e.requestId)) streamed.set(e.requestId, (streamed.get(e.requestId) ?? 0) + e.encodedDataLength)
  })
  cdp.on('Network.loadingFinished', (e: { requestId: string; encodedDataLength: number }) => {
    if (urls.has(e.requestId)) finished.set(e.requestId, e.encodedDataLength)
  })
  return {
    kb: () => {
      let bytes = 0
      for (const id of urls.keys()) bytes += finished.get(id) ?? streamed.get(id) ?? 0
      return bytes / 1024
    },
    requests: () => urls.size,
  }
}

/**
 * In-page micro costs (strings: this file is compiled without DOM types): batches of calls, the
 * median batch's µs per call — on a shared machine a batch the OS preempts is an outlier, not
 * the figure.
 */
const BATCHES = `const perCall = (batches, n, run) => { const out = []; for (let b = 0; b < batches; b++) { const t0 = performance.now(); run(n); out.push((performance.now() - t0) / n * 1000) } out.sort((x, y) => x - y); return out[Math.floor(out.length / 2)] };`
/** `scale`: calls per batch, times the default (a browser without DevTools gives performance.now() 100 µs steps: bigger batches). */
const eventCost = (scale = 1) => `(() => { ${BATCHES}
  const el = document.querySelector('#rows td') || document.body
  const run = (n) => { for (let i = 0; i < n; i++) { el.dispatchEvent(new InputEvent('input', { bubbles: true })); el.dispatchEvent(new KeyboardEvent('keydown', { bubbles: true, key: 'a' })); el.dispatchEvent(new MouseEvent('click', { bubbles: true })) } }
  run(200)
  return perCall(31, ${100 * scale}, run)
})()`
const consoleCost = (scale = 1) => `(() => { ${BATCHES}
  let k = 0
  const run = (n) => { for (let i = 0; i < n; i++) console.warn('bench line', k++) }
  run(50)
  return perCall(31, ${20 * scale}, run)
})()`
const fetchCost = (scale = 1) => `(async () => {
  await Promise.all(Array.from({ length: 20 }, (_, i) => fetch('/ping?w=' + i)))
  // Each batch's requests are awaited after its clock stops, so at most one batch is in flight.
  const out = []
  let k = 0
  for (let b = 0; b < 21; b++) {
    const pending = []
    const t0 = performance.now()
    for (let i = 0; i < ${10 * scale}; i++) pending.push(fetch('/ping?i=' + k++))
    out.push((performance.now() - t0) / ${10 * scale} * 1000)
    await Promise.all(pending)
  }
  out.sort((x, y) => x - y)
  return out[Math.floor(out.length / 2)]
})()`
const EVENT_COST = eventCost()
const CONSOLE_COST = consoleCost()
const FETCH_COST = fetchCost()

/** What a page loaded with ?micro=ID runs: load + 1.5 s, the micro costs (batches 10× bigger), posted to /micro-result. */
const MICRO_PAGE_SCRIPT = (id: string) => `addEventListener('load', () => setTimeout(async () => {
  const costs = { eventUs: ${eventCost(10)}, consoleUs: ${consoleCost(10)}, fetchUs: await ${fetchCost(10)} }
  navigator.sendBeacon('/micro-result?id=${id}', JSON.stringify(costs))
}, ${LOAD_SETTLE_MS}))`

interface Ctx {
  browser: Browser
  executablePath: string
  hosts: HostServer
  marginalia: HttpServer
  store: ReturnType<typeof createMemoryStore>
  smoke: boolean
}

const LOAD_SETTLE_MS = 1_500

/**
 * The tool's own main-thread time over a load of its own (navigation to load + 1.5 s): the CPU
 * profile's samples whose innermost script frame is one of the tool's scripts, counted (each one
 * sampling interval). The browser's work a script asks for (a layout it reads, a request it
 * sends) counts as the script's; compiling it and the page's later style and paint passes do not.
 * A load of its own because profiling slows the page: the main-thread row comes from loads
 * without it.
 */
async function ownLoadMs(ctx: Ctx, url: string, isToolScript: (u: string) => boolean): Promise<number> {
  const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } })
  try {
    const page = await context.newPage()
    await page.goto(`${ctx.hosts.origin}/blank`)
    const cdp = await context.newCDPSession(page)
    await cdp.send('Profiler.enable')
    await cdp.send('Profiler.setSamplingInterval', { interval: SAMPLING_US })
    await cdp.send('Profiler.start')
    await page.goto(url, { waitUntil: 'load' })
    await sleep(ctx.smoke ? 300 : LOAD_SETTLE_MS)
    const { profile } = (await cdp.send('Profiler.stop')) as { profile: Parameters<typeof selfTimeIn>[0] }
    return selfTimeIn(profile, isToolScript, SAMPLING_US).ms
  } finally {
    await context.close()
  }
}

let microLoads = 0
const MICRO_BOUND_MS = 60_000

/**
 * The micro costs of `url` in a Chromium no DevTools client is attached to: Debian's Chromium run
 * headless as a person's browser is, without a debugging pipe or port (a fresh profile), the page
 * measuring itself (`MICRO_PAGE_SCRIPT`) and posting the figures. Under the DevTools protocol the
 * browser instruments what these rows time: every console call is sent to the client with its
 * stack, every request records its initiator; a wrapper's extra frame then costs ~15–20 µs a
 * console call, as much for a wrapper of one line as for the page log's.
 */
async function microCosts(ctx: Ctx, url: string): Promise<MicroCosts> {
  const id = String(++microLoads)
  const profile = mkdtempSync(path.join(tmpdir(), 'marginalia-bench-chromium-'))
  const result = ctx.hosts.microResult(id)
  const browser = spawn(ctx.executablePath, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', `--user-data-dir=${profile}`, '--window-size=1280,800', `${url}${url.includes('?') ? '&' : '?'}micro=${id}`], { stdio: 'ignore', detached: true })
  const exited = new Promise<void>((resolve) => browser.once('exit', () => resolve()))
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      result,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`host-page: ${url} posted no micro costs within ${MICRO_BOUND_MS / 1000} s`)), MICRO_BOUND_MS))),
    ])
  } finally {
    clearTimeout(timer)
    try {
      process.kill(-browser.pid!, 'SIGKILL') // the browser and its helper processes
    } catch {
      // already gone
    }
    await exited
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 })
  }
}

async function openLoad(ctx: Ctx, url: string, isTool: (u: string) => boolean): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; transfers: ReturnType<typeof countTransfers>; mainMs: number }> {
  const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await page.goto(`${ctx.hosts.origin}/blank`)
  const cdp = await context.newCDPSession(page)
  await cdp.send('Network.enable')
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' })
  const transfers = countTransfers(cdp, isTool)
  const before = await metrics(cdp)
  await page.goto(url, { waitUntil: 'load' })
  await sleep(ctx.smoke ? 300 : LOAD_SETTLE_MS)
  const after = await metrics(cdp)
  return { context, page, cdp, transfers, mainMs: (after.TaskDuration! - before.TaskDuration!) * 1000 }
}

const PLAIN_BOUND_MS = 60_000

/**
 * The main-thread row: TaskDuration (the renderer main thread's busy time, thread ticks) from the
 * navigation to load + 1.5 s, in a fresh browser context of a browser driven over a bare DevTools
 * pipe (./cdp-pipe.ts) with only the Page and Performance domains on. The loads Playwright drives
 * have its Network and Runtime domains on: the browser then records a stack for each request's
 * initiator and sends console calls to the client, which a tool's requests pay for on the page's
 * main thread and a person's browser does not.
 */
async function plainMainMs(pipe: PipeBrowser, ctx: Ctx, url: string): Promise<number> {
  const { browserContextId } = await pipe.send<{ browserContextId: string }>('Target.createBrowserContext')
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`host-page: ${url} did not load within ${PLAIN_BOUND_MS / 1000} s`)), PLAIN_BOUND_MS)))
  try {
    return await Promise.race([
      bound,
      (async () => {
        const { targetId } = await pipe.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank', browserContextId })
        const { sessionId } = await pipe.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true })
        await pipe.send('Page.enable', {}, sessionId)
        const goto = async (to: string) => {
          const loaded = pipe.next('Page.loadEventFired', sessionId)
          await pipe.send('Page.navigate', { url: to }, sessionId)
          await loaded
        }
        await goto(`${ctx.hosts.origin}/blank`)
        await pipe.send('Performance.enable', { timeDomain: 'threadTicks' }, sessionId)
        const taskSeconds = async () => (await pipe.send<{ metrics: { name: string; value: number }[] }>('Performance.getMetrics', {}, sessionId)).metrics.find((m) => m.name === 'TaskDuration')!.value
        const before = await taskSeconds()
        await goto(url)
        await sleep(ctx.smoke ? 300 : LOAD_SETTLE_MS)
        return ((await taskSeconds()) - before) * 1000
      })(),
    ])
  } finally {
    clearTimeout(timer)
    await pipe.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {})
  }
}

/** `rounds` interleaved rounds of `plainMainMs` over every host and variant (the starting variant rotating): host → variant → ms of each load. */
async function plainMainRounds(ctx: Ctx, hostList: Host[], variants: Variant[], rounds: number): Promise<Partial<Record<Host, Partial<Record<Variant, number[]>>>>> {
  const pipe = await launchPipeBrowser(ctx.executablePath)
  const out: Partial<Record<Host, Partial<Record<Variant, number[]>>>> = {}
  try {
    // The browser's first load pays for its own start: one load, not counted.
    await plainMainMs(pipe, ctx, `${ctx.hosts.origin}/static-1k/none`)
    for (let r = 0; r < rounds; r++) {
      for (const host of hostList) {
        // The floors are measured on the static pages (no script there, so any script changes how the page parses and lays out).
        const here = variants.filter((v) => host !== 'react' || (v !== 'empty' && v !== 'empty-x'))
        for (let k = 0; k < here.length; k++) {
          const variant = here[(k + r) % here.length]!
          const url = host === 'react' ? `${ctx.hosts.origin}/react/${variant}` : `${ctx.hosts.origin}/${host}/${variant}`
          ;((out[host] ??= {})[variant] ??= []).push(await plainMainMs(pipe, ctx, url))
        }
      }
    }
    return out
  } finally {
    await pipe.close()
  }
}

type Picker = { cold: number; cached: number; send: number; sendLongTasks: number; sendLongest: number; sendNoShot: number }

let annotatedPages = 0

async function measureLoad(ctx: Ctx, host: Host, variant: Variant, annotate: boolean): Promise<{ load: LoadFigures; picker?: Picker }> {
  const mg = ctx.marginalia.url
  const isTool = variant === 'react-grab' ? (u: string) => u.includes('/react-grab.js') : variant === 'empty' ? (u: string) => u.endsWith('/empty.js') : (u: string) => u.startsWith(mg)
  // A load that annotates does so on an address no load has used: every load measures a page nobody has annotated yet.
  const url = host === 'react' ? `${ctx.hosts.origin}/react/${variant}` : `${ctx.hosts.origin}/${host}/${variant}${annotate ? `/a${++annotatedPages}` : ''}`
  const { context, page, cdp, transfers, mainMs } = await openLoad(ctx, url, isTool)
  try {
    await cdp.send('HeapProfiler.collectGarbage')
    const heapMB = (await metrics(cdp)).JSHeapUsedSize! / 2 ** 20
    const idleS = ctx.smoke ? 0.5 : 3
    const i0 = await metrics(cdp)
    await sleep(idleS * 1000)
    const i1 = await metrics(cdp)
    const idleMsPerS = ((i1.TaskDuration! - i0.TaskDuration!) * 1000) / idleS
    const devtoolsEventUs = (await page.evaluate(EVENT_COST)) as number
    const devtoolsConsoleUs = (await page.evaluate(CONSOLE_COST)) as number
    const devtoolsFetchUs = (await page.evaluate(FETCH_COST)) as number
    const ownMs = variant === 'none' || variant === 'empty' ? 0 : await ownLoadMs(ctx, url, isTool)
    const micro = variant === 'empty' ? { eventUs: 0, consoleUs: 0, fetchUs: 0 } : await microCosts(ctx, url)
    const load: LoadFigures = { mainMs, toolKB: transfers.kb(), toolRequests: transfers.requests(), heapMB, idleMsPerS, ...micro, devtoolsEventUs, devtoolsConsoleUs, devtoolsFetchUs, ownMs }
    if (!annotate) return { load }
    const cold = await pickerReady(page)
    // The smoke run leaves the screenshot out: seconds of the page's main thread (see sendAnnotation).
    const withShot = ctx.smoke ? { ms: 0, longTaskMs: 0, longestTaskMs: 0 } : await sendAnnotation(ctx, page, true)
    if (ctx.smoke) await page.keyboard.press('Escape')
    await page.reload({ waitUntil: 'load' })
    await page.locator('marginalia-overlay .annotate').waitFor({ timeout: 20_000 })
    await sleep(ctx.smoke ? 200 : 1_000)
    const cached = await pickerReady(page)
    const withoutShot = await sendAnnotation(ctx, page, false)
    return { load, picker: { cold, cached, send: withShot.ms, sendLongTasks: withShot.longTaskMs, sendLongest: withShot.longestTaskMs, sendNoShot: withoutShot.ms } }
  } finally {
    await context.close()
  }
}

/**
 * Whether the picker's highlight shows, read in the page at the cost of a few property reads: the
 * overlay's host is a child of the document's root. (A Playwright locator would look for it
 * through the whole page and its shadow roots on the page's main thread, ~20 ms of a 1 000-row
 * page's time per press that the figure would count as the overlay's.)
 */
const HIGHLIGHT_SHOWN = `(() => {
  for (const el of document.documentElement.children) {
    const h = el.localName === 'marginalia-overlay' && el.shadowRoot ? el.shadowRoot.querySelector('.highlight') : null
    if (h) return !h.hidden && h.getBoundingClientRect().width > 0
  }
  return false
})()`

/**
 * A real click on Annotate, then real mouse moves over two table cells in turn until the picker's
 * highlight shows: the time from just before the click, ms. Each probe is a CDP round trip (about
 * a millisecond here), so the figure is that much coarse.
 */
async function pickerReady(page: Page): Promise<number> {
  const button = await page.locator('marginalia-overlay .annotate').boundingBox({ timeout: 20_000 })
  const cells = [await page.locator('#rows tr:nth-child(3) td:nth-child(2)').boundingBox(), await page.locator('#rows tr:nth-child(5) td:nth-child(2)').boundingBox()]
  if (!button || !cells[0] || !cells[1]) throw new Error('host-page: no Annotate button or table cell to point at')
  const t0 = performance.now()
  await page.mouse.click(button.x + button.width / 2, button.y + button.height / 2)
  for (let i = 0; ; i++) {
    const c = cells[i % 2]!
    await page.mouse.move(c.x + c.width / 2, c.y + c.height / 2)
    if ((await page.evaluate(HIGHLIGHT_SHOWN)) === true) return performance.now() - t0
    if (performance.now() - t0 > 15_000) throw new Error('host-page: the picker did not show its highlight within 15 s of Annotate')
  }
}

let sent = 0
const SEND_BOUND_MS = 120_000
/** Long tasks of the page (≥ 50 ms) from now on: their sum and the longest, read by `LONG_TASKS_READ`. */
const LONG_TASKS_WATCH = `(() => { const lt = (window.__benchLongTasks = { sum: 0, max: 0 }); new PerformanceObserver((l) => { for (const e of l.getEntries()) { lt.sum += e.duration; lt.max = Math.max(lt.max, e.duration) } }).observe({ type: 'longtask' }) })()`
const LONG_TASKS_READ = `new Promise((r) => setTimeout(() => r(window.__benchLongTasks), 0))`

/**
 * Pick the hovered cell, write a comment, tick or untick Screenshot, press Send: the time until the
 * store emits that annotation, ms, and the page's long tasks meanwhile (the screenshot is drawn on
 * the page's main thread: a clone of the whole document, which grows with its rows).
 */
async function sendAnnotation(ctx: Ctx, page: Page, screenshot: boolean): Promise<{ ms: number; longTaskMs: number; longestTaskMs: number }> {
  const cell = await page.locator('#rows tr:nth-child(5) td:nth-child(2)').boundingBox()
  await page.mouse.click(cell!.x + cell!.width / 2, cell!.y + cell!.height / 2)
  const comment = `bench comment ${++sent} ${Date.now()}`
  await page.locator('marginalia-overlay .composer textarea').fill(comment, { timeout: 15_000 })
  await page.locator('marginalia-overlay .composer input[name="screenshot"]').setChecked(screenshot)
  const submit = await page.locator('marginalia-overlay .composer button[type="submit"]').boundingBox()
  const created = firstValueFrom(ctx.store.changes$.pipe(filter((e) => e.type === 'annotation.created' && (e as { annotation?: { comment?: string } }).annotation?.comment === comment)))
  await page.evaluate(LONG_TASKS_WATCH)
  const t0 = performance.now()
  await page.mouse.click(submit!.x + submit!.width / 2, submit!.y + submit!.height / 2)
  // A bound, not a failure: the screenshot can hold the page's main thread for minutes on a busy machine; the row then reads the bound.
  let timer: NodeJS.Timeout | undefined
  const arrived = await Promise.race([created.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), SEND_BOUND_MS)))])
  clearTimeout(timer)
  if (!arrived) process.stderr.write(`    Send: the annotation was not in the store ${SEND_BOUND_MS / 1000} s after Send (screenshot ${screenshot ? 'ticked' : 'unticked'})\n`)
  const ms = performance.now() - t0
  const lt = (await page.evaluate(LONG_TASKS_READ)) as { sum: number; max: number }
  return { ms, longTaskMs: lt.sum, longestTaskMs: lt.max }
}

// ---- the steps recorder under ordinary use ---------------------------------------------------

/**
 * The tool's own main-thread time in a CPU profile sampled every `intervalUs`: the samples whose
 * innermost script frame is `scriptUrl`'s, each counted as one interval (ms) — not by the wall
 * time since the previous sample, which on a shared machine includes the time the OS ran other
 * work. Also the heaviest of the tool's functions (name:line:column → ms), to say where it goes.
 */
/**
 * The page's own calls a tool's wrapper passes on to the browser's function it wrapped (the page
 * log wraps fetch, console.error and warn, and XMLHttpRequest's open and send): a sample inside
 * one, called from the tool's frame, is the page's time, which it spends without the tool too.
 */
const FORWARDED = new Set(['fetch', 'warn', 'error', 'open', 'send'])

function selfTimeIn(profile: { nodes: { id: number; callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number }; children?: number[] }[]; samples: number[] }, isToolScript: (url: string) => boolean, intervalUs: number): { ms: number; top: string[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const owner = new Map<number, string | undefined>()
  const toolFrame = (id: number): string | undefined => {
    if (owner.has(id)) return owner.get(id)
    // The innermost frame with a script: this node's, else its caller's (a builtin or a native call has none).
    let answer: string | undefined
    let forwarded = false
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame
      if (f.url) {
        answer = isToolScript(f.url) && !forwarded ? `${f.functionName || '(anonymous)'}:${f.lineNumber + 1}:${f.columnNumber + 1}` : undefined
        break
      }
      forwarded ||= FORWARDED.has(f.functionName)
    }
    owner.set(id, answer)
    return answer
  }
  const by = new Map<string, number>()
  let count = 0
  for (const id of profile.samples) {
    const f = toolFrame(id)
    if (f === undefined) continue
    count++
    by.set(f, (by.get(f) ?? 0) + 1)
  }
  const top = [...by].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([f, n]) => `${f} ${((n * intervalUs) / 1000).toFixed(1)} ms`)
  return { ms: (count * intervalUs) / 1000, top }
}

/** Ordinary use for `seconds`: clicks on rows, typing, Tab, wheel scrolls, route changes. Returns the actions done. */
async function ordinaryUse(page: Page, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000
  let actions = 0
  const search = await page.locator('#search').boundingBox()
  for (let i = 0; performance.now() < end; i++) {
    switch (i % 6) {
      case 0:
      case 3: {
        const b = await page.locator(`#rows tr:nth-child(${1 + ((i * 7) % 12)}) button`).boundingBox()
        if (b) await page.mouse.click(b.x + b.width / 2, b.y + b.height / 2)
        break
      }
      case 1:
        await page.mouse.click(search!.x + 10, search!.y + search!.height / 2)
        await page.keyboard.type(`item ${i}`, { delay: 40 })
        await page.keyboard.press('Tab')
        break
      case 2:
        await page.mouse.move(640, 500)
        for (let k = 0; k < 5; k++) {
          await page.mouse.wheel(0, k % 2 ? -120 : 240)
          await sleep(30)
        }
        break
      case 4:
        await page.click(i % 12 === 4 ? '#nav-stats' : '#nav-orders')
        break
      case 5:
        await page.mouse.wheel(0, -2000)
        break
    }
    actions++
    await sleep(250)
  }
  return actions
}

const SAMPLING_US = 50

/**
 * The least a recorder of these steps reads (the `floor` row): the recorder's listeners, with its
 * options, each reading only what tells whether and where the person acted — the event's trust and
 * target, a key press's key (the keys that act are told by it), the address after a route change.
 * It opens with the compile hint the shipped scripts carry.
 */
const FLOOR_JS = `//# allFunctionsCalledOnLoad
(() => {
  let seen
  const passive = { capture: true, passive: true }
  for (const type of ['click', 'change', 'submit', 'resize']) addEventListener(type, (e) => { if (e.isTrusted) seen = e.target }, passive)
  addEventListener('keydown', (e) => { seen = e.key }, { capture: true })
  document.addEventListener('onscrollend' in window ? 'scrollend' : 'scroll', (e) => { seen = e.target }, { passive: true })
  const routed = () => { seen = location.href }
  if (window.navigation) navigation.addEventListener('currententrychange', routed)
  addEventListener('hashchange', routed)
})()
`

async function recorderCost(ctx: Ctx, rounds: number, seconds: number): Promise<NonNullable<HostPageResult['recorder']>> {
  const per: Record<'none' | 'steps' | 'early' | 'floor', { task: number[]; self: number[]; actions: number[] }> = { none: { task: [], self: [], actions: [] }, steps: { task: [], self: [], actions: [] }, early: { task: [], self: [], actions: [] }, floor: { task: [], self: [], actions: [] } }
  const order = ['none', 'steps', 'early', 'floor'] as const
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < order.length; k++) {
      const v = order[(k + r) % order.length]!
      const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } })
      try {
        const page = await context.newPage()
        await page.goto(`${ctx.hosts.origin}/react/rec-${v}`, { waitUntil: 'load' })
        await page.locator('#rows button').first().waitFor()
        const cdp = await context.newCDPSession(page)
        await cdp.send('Performance.enable', { timeDomain: 'threadTicks' })
        await cdp.send('Profiler.enable')
        await cdp.send('Profiler.setSamplingInterval', { interval: SAMPLING_US })
        await sleep(300)
        await cdp.send('Profiler.start')
        const m0 = await metrics(cdp)
        const t0 = performance.now()
        const actions = await ordinaryUse(page, seconds)
        const minutes = (performance.now() - t0) / 60_000
        const m1 = await metrics(cdp)
        const { profile } = (await cdp.send('Profiler.stop')) as { profile: Parameters<typeof selfTimeIn>[0] }
        const script = `${ctx.hosts.origin}/${v}.js`
        const own = selfTimeIn(profile, (u) => u === script, SAMPLING_US)
        if (v !== 'none') process.stderr.write(`    ${v}.js, round ${r + 1}: ${(own.ms / minutes).toFixed(2)} ms/min; ${own.top.join(', ') || 'no sample'}\n`)
        per[v].task.push(((m1.TaskDuration! - m0.TaskDuration!) * 1000) / minutes)
        per[v].self.push(v === 'none' ? 0 : own.ms / minutes)
        per[v].actions.push(actions / minutes)
      } finally {
        await context.close()
      }
    }
  }
  const task = (v: 'none' | 'steps' | 'early') => median(per[v].task)
  return {
    actionsPerMin: median([...per.steps.actions, ...per.early.actions, ...per.none.actions, ...per.floor.actions]),
    stepsSelfMsPerMin: median(per.steps.self),
    earlySelfMsPerMin: median(per.early.self),
    floorSelfMsPerMin: median(per.floor.self),
    taskDeltaStepsMsPerMin: task('steps') - task('none'),
    taskDeltaEarlyMsPerMin: task('early') - task('none'),
  }
}

// ---- the scenario -----------------------------------------------------------------------------

const medianOf = (list: LoadFigures[], key: keyof LoadFigures): number => median(list.map((f) => f[key]))

export async function hostPage(opts: HostPageOptions): Promise<HostPageResult | undefined> {
  const executablePath = process.env.MARGINALIA_CHROMIUM || '/usr/bin/chromium'
  if (!existsSync(executablePath)) return undefined
  if (!existsSync(path.join(ROOT, 'dist', 'overlay', 'overlay.js'))) throw new Error('host-page: dist/overlay is missing; run `npm run build` first')
  mkdirSync(CACHE, { recursive: true })
  const reactGrab = opts.smoke ? undefined : reactGrabScript()
  const dashboard = opts.smoke ? undefined : await buildDashboard()
  // Unminified (its functions named in the profile), with the compile hint every shipped script opens with (scripts/build-overlay.mjs).
  const stepsJs = (
    await esbuild({ stdin: { contents: "import { installSteps } from './steps.js'; installSteps(window)", resolveDir: path.join(ROOT, 'src', 'browser', 'early'), loader: 'ts' }, bundle: true, format: 'iife', minify: false, write: false, banner: { js: '//# allFunctionsCalledOnLoad' } })
  ).outputFiles[0]!.text
  const earlyJs = readFileSync(path.join(ROOT, 'dist', 'overlay', 'early.js'), 'utf8')
  const store = createMemoryStore()
  const marginalia = await startHttpServer(store, { port: 0, log: () => {} })
  const hosts = await serveHosts(opts.smoke, marginalia.url, dashboard, reactGrab, stepsJs, earlyJs)
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  const ctx: Ctx = { browser, executablePath, hosts, marginalia, store, smoke: opts.smoke }
  try {
    const hostList: Host[] = opts.smoke ? ['static-1k'] : ['static-1k', 'static-10k', 'react']
    const variants: Variant[] = opts.smoke ? ['none', 'snippet'] : reactGrab ? ['none', 'tag', 'snippet', 'react-grab', 'empty'] : ['none', 'tag', 'snippet', 'empty']
    const loads: Record<string, Record<string, LoadFigures[]>> = {}
    const annotate: Record<string, Record<keyof Picker, number[]>> = {}
    // The browser's first page load pays for its own start (caches, compilers): one load, not counted.
    if (!opts.smoke && (opts.parts === undefined || opts.parts === 'loads')) await measureLoad(ctx, 'static-1k', 'none', false)
    for (let r = 0; r < (opts.parts === 'recorder' || opts.parts === 'main' ? 0 : opts.rounds); r++) {
      for (const host of hostList) {
        for (let k = 0; k < variants.length; k++) {
          const variant = variants[(k + r) % variants.length]!
          // The floor is measured on the static pages (no script there, so any script changes how the page parses and lays out).
          if (variant === 'empty' && host === 'react') continue
          const withAnnotate = host === 'static-1k' && (variant === 'tag' || variant === 'snippet')
          const { load, picker } = await measureLoad(ctx, host, variant, withAnnotate)
          ;((loads[host] ??= {})[variant] ??= []).push(load)
          if (picker) {
            const a = (annotate[variant] ??= { cold: [], cached: [], send: [], sendLongTasks: [], sendLongest: [], sendNoShot: [] })
            for (const key of Object.keys(a) as (keyof Picker)[]) a[key].push(picker[key])
          }
        }
      }
    }
    const plain = opts.parts === 'recorder' ? {} : await plainMainRounds(ctx, opts.smoke ? hostList : ['static-100', ...hostList], opts.smoke ? variants : [...variants, 'empty-x'], opts.smoke ? 1 : (opts.mainRounds ?? 3 * opts.rounds))
    const result: HostPageResult = { loads: {}, noToolRange: {}, plainMain: {}, plainNoToolRange: {}, annotate: {}, reactGrab: reactGrab ? `react-grab@${REACT_GRAB_VERSION}, dist/index.global.js` : opts.smoke ? 'not in the smoke run' : 'react-grab could not be installed from the registry; its column is left out' }
    for (const [host, byVariant] of Object.entries(loads)) {
      const out: Partial<Record<Variant, LoadFigures>> = {}
      for (const [variant, list] of Object.entries(byVariant)) {
        out[variant as Variant] = { ownMs: medianOf(list, 'ownMs'), mainMs: medianOf(list, 'mainMs'), toolKB: medianOf(list, 'toolKB'), toolRequests: medianOf(list, 'toolRequests'), heapMB: medianOf(list, 'heapMB'), idleMsPerS: medianOf(list, 'idleMsPerS'), eventUs: medianOf(list, 'eventUs'), consoleUs: medianOf(list, 'consoleUs'), fetchUs: medianOf(list, 'fetchUs'), devtoolsEventUs: medianOf(list, 'devtoolsEventUs'), devtoolsConsoleUs: medianOf(list, 'devtoolsConsoleUs'), devtoolsFetchUs: medianOf(list, 'devtoolsFetchUs') }
      }
      result.loads[host as Host] = out
      const none = (byVariant.none ?? []).map((f) => f.mainMs)
      if (none.length) result.noToolRange[host as Host] = { min: Math.min(...none), max: Math.max(...none) }
    }
    for (const [host, byVariant] of Object.entries(plain) as [Host, Partial<Record<Variant, number[]>>][]) {
      result.plainMain[host] = Object.fromEntries(Object.entries(byVariant).map(([variant, list]) => [variant, { ms: median(list), loads: list.length }]))
      const none = byVariant.none ?? []
      if (none.length) result.plainNoToolRange[host] = { min: Math.min(...none), max: Math.max(...none) }
    }
    for (const [variant, a] of Object.entries(annotate)) result.annotate[variant as Variant] = { pickerColdMs: median(a.cold), pickerCachedMs: median(a.cached), sendMs: median(a.send), sendLongTasksMs: median(a.sendLongTasks), sendLongestTaskMs: median(a.sendLongest), sendNoScreenshotMs: median(a.sendNoShot) }
    if (dashboard && (opts.parts === undefined || opts.parts === 'recorder')) result.recorder = await recorderCost(ctx, opts.rounds, opts.recorderSeconds ?? 60)
    return result
  } finally {
    await browser.close()
    await hosts.close()
    await marginalia.close()
    await store.close()
  }
}
