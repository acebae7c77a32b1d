/**
 * Per framework fixture app (test/fixtures/frameworks/<name>, installed by `npm run fixtures`):
 *  - the dev server's start-up, spawn → `/` answered with HTTP 200, on the starter as it is
 *    ("without") and after `marginalia init --yes` ("with"), runs alternating so that load on the
 *    machine weighs on both alike;
 *  - empty starter → first annotation: in the "with" run, from spawning the dev server of the app
 *    `init --yes` set up to an MCP client started from the `.mcp.json` init wrote reading the
 *    annotation that Chromium made by the keyboard (the install is excluded: the fixture's
 *    node_modules are hard-linked into a fresh copy each run).
 * Every run is cold: a fresh copy without build output or dependency-optimizer cache. Each dev
 * server runs in its own process group and is killed whole by its pid.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CLI, median, ROOT, sleep } from './lib.js'
import { freePort } from '../test/helpers/ports.js'

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'frameworks')

interface Framework {
  /** The fixture's folder name. */
  name: string
  /** The dev server's script, relative to node_modules, and its arguments for `port`. */
  bin: string
  args: (port: number) => string[]
  /** The element annotated by the keyboard. */
  selector: string
  /** Resolves when the page has hydrated (the annotated element is live). */
  hydrated: (page: Page) => Promise<void>
  /** The dev server starts no Marginalia server: `marginalia serve` runs beside it, as init says. */
  serve?: boolean
  /** init writes the server's address into the page (a head snippet): the port is chosen before init. */
  portAtInit?: boolean
}

/** Clicks `selector` until the text of `shown` (default: the clicked element) is no longer `initial`. */
const clickUntilChanged = (selector: string, initial: string, shown = selector) => async (page: Page) => {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
    await page.locator(selector).click()
    if ((await page.locator(shown).textContent())?.trim() !== initial) return
  }
  throw new Error(`${selector} never reacted to a click`)
}
const waitFor = (expression: string) => async (page: Page) => void (await page.waitForFunction(expression, undefined, { timeout: 60_000 }))
const vite = (sub: string[]) => (port: number) => [...sub, '--host', '127.0.0.1', '--port', String(port), '--strictPort']

export const FRAMEWORKS: Framework[] = [
  { name: 'sveltekit', bin: 'vite/bin/vite.js', args: vite(['dev']), selector: 'button.ui-button', hydrated: waitFor("document.querySelector('button.ui-button')?.__svelte_meta != null") },
  { name: 'react-router', bin: '@react-router/dev/bin.js', args: vite(['dev']), selector: '#add-to-basket', hydrated: clickUntilChanged('#add-to-basket', 'Add to basket (0)') },
  { name: 'vue', bin: 'vite/bin/vite.js', args: vite([]), selector: '#add-to-basket', hydrated: clickUntilChanged('#add-to-basket', 'Add to basket (0)') },
  { name: 'solid', bin: 'vite/bin/vite.js', args: vite([]), selector: '#add-to-basket', hydrated: clickUntilChanged('#add-to-basket', 'Add to basket (0)') },
  { name: 'preact', bin: 'vite/bin/vite.js', args: vite([]), selector: '#add-to-basket', hydrated: clickUntilChanged('#add-to-basket', 'Add to basket (0)') },
  { name: 'nuxt', bin: 'nuxt/bin/nuxt.mjs', args: (port) => ['dev', '--port', String(port), '--host', '127.0.0.1'], selector: 'button.ui-button', hydrated: waitFor("document.querySelector('button.ui-button')?.__vueParentComponent != null") },
  {
    name: 'astro',
    bin: 'astro/astro.js',
    args: (port) => ['dev', '--port', String(port), '--host', '127.0.0.1'],
    selector: 'button.astro-button',
    hydrated: waitFor("document.querySelectorAll('astro-island').length === 3 && document.querySelectorAll('astro-island[ssr]').length === 0"),
  },
  {
    name: 'next-app',
    bin: 'next/dist/bin/next',
    args: (port) => ['dev', '-p', String(port), '-H', '127.0.0.1'],
    selector: 'section.counter button.ui-button',
    hydrated: clickUntilChanged('section.counter button.ui-button', 'Count: 0'),
    serve: true,
  },
  {
    name: 'angular',
    bin: '@angular/cli/bin/ng.js',
    args: (port) => ['serve', '--port', String(port), '--host', '127.0.0.1'],
    selector: '#add',
    hydrated: clickUntilChanged('#add', 'Count: 0', 'app-counter p'),
    serve: true,
    portAtInit: true,
  },
]

/** Whether the fixture is installed, with this package linked in. */
export function fixtureInstalled(name: string): boolean {
  return existsSync(path.join(FIXTURES, name, 'node_modules', 'marginalia'))
}

/**
 * A fresh copy of the fixture in a temporary folder, without build output; node_modules
 * hard-linked from the installed one (inside the app, so dev servers serve from it), without
 * caches, and `marginalia` linked to this checkout.
 */
function copyFixture(name: string): string {
  const from = path.join(FIXTURES, name)
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `marginalia-bench-${name}-`)))
  const skip = new Set(['node_modules', '.angular', '.nuxt', '.output', '.svelte-kit', '.astro', '.react-router', 'dist', 'build', '.marginalia', 'marginalia-sources.json'])
  cpSync(from, dir, { recursive: true, filter: (src) => src === from || !skip.has(path.relative(from, src).split(path.sep)[0]!) })
  const modules = path.join(dir, 'node_modules')
  execFileSync('cp', ['-al', realpathSync(path.join(from, 'node_modules')), modules])
  for (const cache of ['.vite', '.cache', '.astro']) rmSync(path.join(modules, cache), { recursive: true, force: true })
  rmSync(path.join(modules, 'marginalia'), { force: true })
  symlinkSync(ROOT, path.join(modules, 'marginalia'), 'dir')
  rmSync(path.join(modules, '.bin', 'marginalia'), { force: true })
  symlinkSync(CLI, path.join(modules, '.bin', 'marginalia'))
  mkdirSync(path.join(dir, '.home'))
  return dir
}

/** The app's environment, as from a terminal: no test or Marginalia variables, no telemetry. */
function appEnv(dir: string, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MARGINALIA_') && !k.startsWith('VITEST') && k !== 'NODE_ENV' && k !== 'TEST') env[k] = v
  return { ...env, HOME: path.join(dir, '.home'), NUXT_TELEMETRY_DISABLED: '1', ASTRO_TELEMETRY_DISABLED: '1', NEXT_TELEMETRY_DISABLED: '1', NG_CLI_ANALYTICS: 'false', DO_NOT_TRACK: '1', BROWSER: 'none', CI: '1', NO_COLOR: '1', ...extra }
}

async function init(dir: string, env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'init', '--yes'], { cwd: dir, env: appEnv(dir, env), stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d))
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`init --yes failed (${code}) in ${dir}: ${err}`)
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const closed = once(child, 'close')
  try {
    process.kill(-child.pid!, 'SIGKILL')
  } catch {
    // already gone
  }
  await closed
}

/** Polls `/` until it answers 200; returns the ms since `t0`. */
async function firstPage(url: string, t0: number, child: ChildProcess, output: () => string): Promise<number> {
  for (const deadline = t0 + 180_000; performance.now() < deadline; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`the dev server exited (${child.exitCode}): ${output().slice(-2000)}`)
    const res = await fetch(url, { headers: { accept: 'text/html' } }).catch(() => undefined)
    if (res) await res.arrayBuffer().catch(() => undefined)
    if (res?.status === 200) return performance.now() - t0
  }
  throw new Error(`no 200 from ${url} within 180 s: ${output().slice(-2000)}`)
}

interface Run {
  startup: number
  /** Spawn → the agent has read the annotation (only when `browser` is given). */
  firstAnnotation?: number
}

async function devRun(fw: Framework, dir: string, browser: Browser | undefined, marginaliaPort: number): Promise<Run> {
  const port = await freePort()
  const env = appEnv(dir, fw.serve ? { MARGINALIA_URL: `http://127.0.0.1:${marginaliaPort}` } : { MARGINALIA_PORT: String(marginaliaPort) })
  // Beside the dev server, as init says, with the store the agent's config names. It is started
  // first and the dev server's start-up counted from its own spawn: the person runs `serve` once,
  // not with every dev server; the first annotation counts from `serve`'s spawn.
  const tServe = performance.now()
  const server = fw.serve && browser ? spawn(process.execPath, [CLI, 'serve', '--port', String(marginaliaPort), '--root', dir, ...storeArgs(dir)], { cwd: dir, env, stdio: 'ignore', detached: true }) : undefined
  if (server) await serverUp(`http://127.0.0.1:${marginaliaPort}/health`, server)
  const t0 = performance.now()
  const child = spawn(process.execPath, [path.join(dir, 'node_modules', fw.bin), ...fw.args(port)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let text = ''
  child.stdout!.on('data', (d: Buffer) => (text += d))
  child.stderr!.on('data', (d: Buffer) => (text += d))
  const url = `http://127.0.0.1:${port}/`
  try {
    const startup = await firstPage(url, t0, child, () => text)
    if (!browser) return { startup }
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(url)
      await fw.hydrated(page)
      await annotate(page, fw.selector, 'bench: first annotation')
      await agentReads(dir, env, 'bench: first annotation')
      return { startup, firstAnnotation: performance.now() - tServe }
    } finally {
      await context.close()
    }
  } finally {
    await killGroup(child)
    if (server) await killGroup(server)
  }
}

/** Polls `url` until it answers 200 (`marginalia serve` is up). */
async function serverUp(url: string, child: ChildProcess): Promise<void> {
  for (const deadline = performance.now() + 30_000; performance.now() < deadline; await sleep(20)) {
    if (child.exitCode !== null) throw new Error(`marginalia serve exited (${child.exitCode})`)
    const res = await fetch(url).catch(() => undefined)
    if (res) await res.arrayBuffer().catch(() => undefined)
    if (res?.status === 200) return
  }
  throw new Error(`marginalia serve did not answer ${url} within 30 s`)
}

/** `--store <file>` as the `.mcp.json` init wrote names it, if it does. */
function storeArgs(dir: string): string[] {
  const { args } = (JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { args: string[] } } }).mcpServers.marginalia
  const at = args.indexOf('--store')
  return at >= 0 && args[at + 1] ? ['--store', path.resolve(dir, args[at + 1]!)] : []
}

/** By the keyboard: focus, Alt+Shift+A (unless annotate mode is on), Enter, type, Ctrl+Enter; resolves when the pin is sent. */
async function annotate(page: Page, selector: string, comment: string): Promise<void> {
  const toggle = page.locator('marginalia-overlay .annotate')
  await toggle.waitFor({ timeout: 60_000 })
  await page.locator('marginalia-overlay .agent:not([data-state="offline"])').waitFor({ timeout: 60_000 })
  const sent = page.locator('marginalia-overlay .pin:not([data-waiting])')
  await page.locator(selector).focus()
  if ((await toggle.getAttribute('aria-pressed')) !== 'true') await page.keyboard.press('Alt+Shift+A')
  await page.locator(selector).focus()
  await page.keyboard.press('Enter')
  await page.locator('marginalia-overlay .composer textarea').waitFor({ timeout: 15_000 })
  await page.keyboard.type(comment)
  await page.keyboard.press('Control+Enter')
  await sent.first().waitFor({ timeout: 15_000 })
}

/** An MCP client started as the `.mcp.json` init wrote says reads the pending annotation `comment`, with its source. */
async function agentReads(dir: string, env: Record<string, string>, comment: string): Promise<void> {
  const config = JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { command: string; args: string[] } } }
  const { command, args } = config.mcpServers.marginalia
  const client = new Client({ name: 'bench-agent', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, cwd: dir, env: { ...env, MARGINALIA_PORT: '' }, stderr: 'ignore' }))
  try {
    const all = (await client.callTool({ name: 'get_all_pending', arguments: {} })) as CallToolResult
    const found = (all.structuredContent as { annotations?: { id: string; comment: string }[] }).annotations?.find((a) => a.comment === comment)
    if (!found) throw new Error(`the agent did not see "${comment}": ${JSON.stringify(all.content).slice(0, 500)}`)
    const one = (await client.callTool({ name: 'get_annotation', arguments: { id: found.id, images: false } })) as CallToolResult
    const source = (one.structuredContent as { annotation?: { source?: { file?: string; line?: number } } }).annotation?.source
    if (!source?.file || !source.line) throw new Error(`the annotation reached the agent without file:line: ${JSON.stringify(one.structuredContent).slice(0, 500)}`)
  } finally {
    await client.close()
  }
}

export interface FrameworkFigures {
  name: string
  without: number
  with: number
  firstAnnotation: number
}

/** `runs` alternating cold starts without and with Marginalia, for one framework; medians. */
export async function frameworkBench(fw: Framework, runs: number): Promise<FrameworkFigures> {
  const executablePath = process.env.MARGINALIA_CHROMIUM || '/usr/bin/chromium'
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
  const without: number[] = []
  const withIt: number[] = []
  const first: number[] = []
  try {
    for (let i = 0; i < runs; i++) {
      const plain = copyFixture(fw.name)
      try {
        without.push((await devRun(fw, plain, undefined, await freePort())).startup)
      } finally {
        rmSync(plain, { recursive: true, force: true })
      }
      const set = copyFixture(fw.name)
      try {
        const marginaliaPort = await freePort()
        await init(set, fw.portAtInit ? { MARGINALIA_PORT: String(marginaliaPort) } : {})
        const r = await devRun(fw, set, browser, marginaliaPort)
        withIt.push(r.startup)
        first.push(r.firstAnnotation!)
      } finally {
        rmSync(set, { recursive: true, force: true })
      }
      process.stderr.write(`    ${fw.name} run ${i + 1}: without ${Math.round(without.at(-1)!)} ms, with ${Math.round(withIt.at(-1)!)} ms, first annotation ${Math.round(first.at(-1)!)} ms\n`)
    }
  } finally {
    await browser.close()
  }
  return { name: fw.name, without: median(without), with: median(withIt), firstAnnotation: median(first) }
}
