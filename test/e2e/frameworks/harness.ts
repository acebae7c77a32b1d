/**
 * A framework fixture app (test/fixtures/frameworks/<name>, installed by `npm run fixtures`) run
 * the way a person runs it: copied to a temporary folder (its node_modules hard-linked),
 * `marginalia init --yes` from the built CLI, the framework's own dev server, Chromium on the page,
 * and an MCP client started from the config `init` wrote.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import type { Cleanups } from '../../helpers/cleanup.js'
import { runCli, startServeCli, type CliRun } from '../../helpers/cli.js'
import { spawnNode, type Spawned } from '../../helpers/process.js'
export { freePort } from '../../helpers/ports.js'
export { overlayReady } from '../../helpers/apps.js'
import { overlayReady } from '../../helpers/apps.js'
import { freePort } from '../../helpers/ports.js'

const REPO = path.resolve(import.meta.dirname, '../../..')
const FIXTURES = path.join(REPO, 'test', 'fixtures', 'frameworks')

/** Whether fixture `name` is installed (`npm run fixtures <name>`), with this package linked in. */
function fixtureReady(name: string): boolean {
  return existsSync(path.join(FIXTURES, name, 'node_modules', '.marginalia-fixture-stamp')) && existsSync(path.join(FIXTURES, name, 'node_modules', 'marginalia'))
}

/** A copy of fixture `name` in a temporary folder, without its build output; node_modules hard-linked to the fixture's. */
export function copyFixture(name: string, cleanups: Cleanups): string {
  const from = path.join(FIXTURES, name)
  if (!fixtureReady(name)) throw new Error(`the ${name} fixture app is not installed: run \`npm run fixtures ${name}\` (after \`npm run build\`)`)
  const dir = mkdtempSync(path.join(tmpdir(), `marginalia-${name}-`))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const skip = new Set(['node_modules', 'dist', 'build', '.react-router', '.marginalia', '.vite'])
  cpSync(from, dir, { recursive: true, filter: (src) => !skip.has(path.basename(src)) || path.dirname(src) !== from })
  // Hard links, not a link to the fixture's folder: Vite serves only files inside the app (server.fs.allow).
  const modules = path.join(dir, 'node_modules')
  execFileSync('cp', ['-al', path.join(from, 'node_modules'), modules])
  rmSync(path.join(modules, '.vite'), { recursive: true, force: true })
  for (const link of [path.join(modules, 'marginalia'), path.join(modules, '.bin', 'marginalia')]) rmSync(link, { force: true })
  symlinkSync(REPO, path.join(modules, 'marginalia'), 'dir')
  symlinkSync(path.join(REPO, 'dist', 'marginalia.mjs'), path.join(modules, '.bin', 'marginalia'))
  mkdirSync(path.join(dir, '.home'))
  return dir
}

/** `marginalia init --yes` in `dir` (its own HOME, so nothing outside the folder is written). */
export async function init(dir: string): Promise<CliRun> {
  const r = await runCli(['init', '--yes'], dir, { HOME: path.join(dir, '.home') }, 60_000)
  if (r.code !== 0) throw new Error(`init failed (${r.code}): ${r.stderr}${r.stdout}`)
  return r
}

/**
 * The package bin `bin` of the app at `dir` (`vite`, `react-router`), run with node and `args`;
 * stopped with SIGTERM (the dev server closes the Marginalia server it started), then SIGKILL.
 */
export function runBin(cleanups: Cleanups, dir: string, bin: string, args: string[], env: Record<string, string>): Spawned {
  const script = realpathSync(path.join(dir, 'node_modules', '.bin', bin))
  // As from a terminal: not the test runner's NODE_ENV=test and VITEST (dev plugins turn themselves off or half off under them).
  const proc = spawnNode(cleanups, [script, ...args], { cwd: dir, env: { NODE_ENV: '', VITEST: '', VITEST_MODE: '', VITEST_POOL_ID: '', VITEST_WORKER_ID: '', TEST: '', BROWSER: 'none', NO_COLOR: '1', ...env } })
  cleanups.push(async () => {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return
    proc.child.kill('SIGTERM')
    await proc.exited(15_000).catch(() => proc.child.kill('SIGKILL'))
  })
  return proc
}

/** Errors the page logged (console errors and uncaught exceptions), collected from now on. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(String(e)))
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`)
  })
  return errors
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/** What a spawned dev server printed, both streams: for overlayReady's error. */
export const outputOf = (proc: Spawned) => (): string => `stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`

/** Click `selector` until `done` says the page reacted: the app has hydrated (a dev server may still be optimizing its dependencies). */
export async function untilHydrated(page: Page, selector: string, done: (text: string | null) => boolean): Promise<void> {
  await expect
    .poll(
      async () => {
        await page.locator(selector).click()
        return done(await page.locator(selector).textContent())
      },
      { timeout: 45_000, interval: 1000 },
    )
    .toBe(true)
}

/**
 * Annotate `selector` by the keyboard only: focus it, Alt+Shift+A (annotate mode), Enter, type,
 * Ctrl+Enter. A dev server may reload the page once while it optimizes dependencies on a cold
 * start: then the overlay comes back and the keyboard goes again (three tries at most).
 */
export async function annotateByKeyboard(page: Page, selector: string, comment: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await overlayReady(page)
      await page.locator(selector).focus()
      if ((await ui(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await page.keyboard.press('Alt+Shift+A')
      await page.keyboard.press('Enter')
      await ui(page, '.composer textarea').waitFor({ timeout: 10_000 })
      break
    } catch (e) {
      if (attempt === 3) throw e
    }
  }
  await page.keyboard.type(comment)
  await page.keyboard.press('Control+Enter')
  await ui(page, '.composer textarea').waitFor({ state: 'hidden' })
}

interface McpConfig {
  mcpServers: Record<string, { command: string; args: string[] }>
}

/** An MCP client started from the `.mcp.json` init wrote in `dir` (the stdio server, as Claude Code starts it). */
export async function agentFromConfig(cleanups: Cleanups, dir: string, env: Record<string, string>) {
  const { command, args } = (JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as McpConfig).mcpServers.marginalia!
  const client = new Client({ name: 'framework-test', version: '1.0.0' })
  const environment = Object.fromEntries(Object.entries({ ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', ...env }).filter((e): e is [string, string] => e[1] !== undefined))
  await client.connect(new StdioClientTransport({ command, args, cwd: dir, env: environment, stderr: 'pipe' }))
  cleanups.push(() => client.close())
  const call = async (name: string, a: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: a })) as CallToolResult
  return {
    client,
    /** The one pending annotation whose comment is `comment`, in full (get_all_pending, then get_annotation). */
    async annotation(comment: string): Promise<{ source?: Record<string, unknown>; sourceLines?: string | undefined; comment: string }> {
      const pending = (await call('get_all_pending')).structuredContent as { annotations: { id: string; comment: string }[] }
      const found = pending.annotations.find((a) => a.comment === comment)
      if (!found) throw new Error(`no pending annotation "${comment}" among ${JSON.stringify(pending.annotations.map((a) => a.comment))}`)
      const full = (await call('get_annotation', { id: found.id, images: false })).structuredContent as { annotation: { source?: Record<string, unknown>; comment: string }; sourceLines?: string }
      return { ...full.annotation, sourceLines: full.sourceLines }
    },
  }
}

/** 1-based line and column of the first occurrence of `needle` in `file`. */
export function positionOf(file: string, needle: string): { line: number; column: number } {
  const lines = readFileSync(file, 'utf8').split('\n')
  const line = lines.findIndex((l) => l.includes(needle))
  if (line < 0) throw new Error(`${needle} not in ${file}`)
  return { line: line + 1, column: lines[line]!.indexOf(needle) + 1 }
}

/** Every file of `dir` (recursively) as text, for checks on a build's output. */
function filesText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
}

/** The text around the first `needle` in `text` (undefined when there is none): a failure names the place, not the whole bundle. */
const around = (text: string, needle: string): string | undefined => {
  const i = text.indexOf(needle)
  return i < 0 ? undefined : text.slice(Math.max(0, i - 150), i + needle.length + 150)
}

/**
 * A Vite app's preview build, as the guide tells a person: `vite build` with init's config as it is
 * (checked to carry nothing of Marginalia, no manifest), then with `marginalia({ sourceLocations:
 * 'ids' })` in vite.config.ts (ids in the bundle, never a source path, and the manifest beside it),
 * served by `vite preview`, with `marginalia serve --sources marginalia-sources.json` beside it.
 */
async function previewBuild(cleanups: Cleanups, dir: string, noPaths: string[]) {
  const viteBuild = async (): Promise<string> => {
    rmSync(path.join(dir, 'dist'), { recursive: true, force: true })
    const build = runBin(cleanups, dir, 'vite', ['build'], {})
    const code = await build.exited(120_000)
    if (code !== 0) throw new Error(`vite build exited with ${code}: ${build.stderr()}${build.stdout()}`)
    return filesText(path.join(dir, 'dist'))
  }
  const manifestFile = path.join(dir, 'marginalia-sources.json')
  const plain = await viteBuild()
  expect(existsSync(manifestFile)).toBe(false)
  for (const marginalia of ['data-mid', 'data-marginalia', 'marginalia-loader', '__marginaliaCall', 'overlay.js', ...noPaths]) expect(around(plain, marginalia), `the plain build carries ${marginalia}`).toBeUndefined()

  const config = path.join(dir, 'vite.config.ts')
  const before = readFileSync(config, 'utf8')
  expect(before).toContain('marginalia()')
  writeFileSync(config, before.replace('marginalia()', "marginalia({ sourceLocations: 'ids' })"))
  const built = await viteBuild()
  for (const marginalia of ['data-marginalia', 'marginalia-loader', '__marginaliaCall', 'overlay.js', ...noPaths]) expect(around(built, marginalia), `the ids build carries ${marginalia}`).toBeUndefined()
  expect(built).toContain('data-mid')
  const manifest = (JSON.parse(readFileSync(manifestFile, 'utf8')) as { version: number; sources: Record<string, string> }).sources
  expect(existsSync(path.join(dir, 'dist', 'marginalia-sources.json'))).toBe(false)

  const port = await freePort()
  const preview = runBin(cleanups, dir, 'vite', ['preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {})
  await preview.waitFor('stdout', /Local:/, 30_000)
  const serve = await startServeCli(cleanups, dir, ['--sources', 'marginalia-sources.json'])
  return { url: `http://127.0.0.1:${port}/`, manifest, built, serve, env: { MARGINALIA_PORT: new URL(serve.url).port } }
}

/**
 * A person on the Vite app's preview build (see previewBuild) with the overlay's script tag: the
 * shared button written at `file` (`#add-to-basket`, its text `initial` until hydrated) carries a
 * `data-mid`, the keyboard annotates it, and an agent started from init's config gets its exact
 * file:line from the manifest; the page logs no error.
 */
export async function annotatesPreviewBuild(cleanups: Cleanups, page: Page, dir: string, { file, noPaths, initial }: { file: string; noPaths: string[]; initial: string }): Promise<void> {
  const button = positionOf(path.join(dir, file), '<button')
  const preview = await previewBuild(cleanups, dir, noPaths)
  expect(Object.values(preview.manifest)).toContain(`${file}:${button.line}:${button.column}`)
  const errors = pageErrors(page)
  await page.goto(preview.url)
  await page.addScriptTag({ url: `${preview.serve.url}/overlay.js` })
  await overlayReady(page)
  await untilHydrated(page, '#add-to-basket', (t) => t?.trim() !== initial)
  expect(await page.locator('#add-to-basket').getAttribute('data-mid')).toMatch(/^\w{4,}$/)
  await annotateByKeyboard(page, '#add-to-basket', 'on the preview build')
  const agent = await agentFromConfig(cleanups, dir, preview.env)
  await expect.poll(() => agent.annotation('on the preview build').then((a) => a.source, () => undefined), { timeout: 10_000 }).toMatchObject({ file, ...button, via: 'manifest', exact: true })
  expect(errors).toEqual([])
}
