/**
 * A framework fixture app (test/fixtures/frameworks/<name>, installed by `npm run fixtures`) as a
 * person would run it: copied to a temporary directory (its node_modules linked, not copied), set
 * up by the built CLI's `init --yes`, its dev or preview server started in its own process group
 * (killed whole after the test: Nuxt and Astro start children), the overlay driven by the
 * keyboard in Chromium, and the agent started exactly as the config `init` wrote says.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Page } from 'playwright-core'
import type { Cleanups } from './cleanup.js'
export { freePort } from './ports.js'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/frameworks')

/** Whether the fixture is installed (`npm run fixtures <name>`); the framework's tests skip, saying so, when not. */
export function fixtureInstalled(name: string): boolean {
  const ok = existsSync(path.join(FIXTURES, name, 'node_modules', 'marginalia'))
  if (!ok) process.stderr.write(`\n[skipped] the ${name} fixture is not installed: npm run fixtures ${name}\n`)
  return ok
}

/** The fixture copied to a temporary directory (real path), its node_modules a link to the installed one; removed by `cleanups`. */
export function copyFixture(cleanups: Cleanups, name: string): string {
  const from = path.join(FIXTURES, name)
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `marginalia-${name}-`)))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const skip = new Set(['node_modules', '.nuxt', '.output', '.svelte-kit', '.astro', 'dist', '.marginalia', 'marginalia-sources.json'])
  cpSync(from, dir, { recursive: true, filter: (src) => src === from || !skip.has(path.relative(from, src).split(path.sep)[0]!) })
  symlinkSync(path.join(from, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  return dir
}

/**
 * The installed fixture itself, for a framework whose dev server serves files only from inside the
 * app (Astro answers 403 for its own dev toolbar when node_modules is a link out of the app): its
 * files are saved now and put back by `cleanups` (what the test added is removed). One test at a
 * time per fixture.
 */
export function fixtureInPlace(cleanups: Cleanups, name: string): string {
  const dir = path.join(FIXTURES, name)
  const saved = mkdtempSync(path.join(os.tmpdir(), `marginalia-${name}-saved-`))
  const entries = readdirSync(dir).filter((e) => e !== 'node_modules')
  for (const e of entries) cpSync(path.join(dir, e), path.join(saved, e), { recursive: true })
  cleanups.push(() => {
    for (const e of readdirSync(dir)) if (e !== 'node_modules') rmSync(path.join(dir, e), { recursive: true, force: true })
    for (const e of entries) cpSync(path.join(saved, e), path.join(dir, e), { recursive: true })
    rmSync(saved, { recursive: true, force: true })
  })
  return dir
}

/** The environment of the app's processes: no Marginalia or test variables from this process (with TEST or NODE_ENV=test Nuxt logs nothing), no telemetry. */
function appEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MARGINALIA_') && !k.startsWith('VITEST') && k !== 'NODE_ENV' && k !== 'TEST') env[k] = v
  return { ...env, NUXT_TELEMETRY_DISABLED: '1', ASTRO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', BROWSER: 'none', CI: '1', ...extra }
}

export interface AppProcess {
  readonly child: ChildProcess
  output(): string
  /** Wait until the output (stdout and stderr) matches; fail on exit or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** Its exit code; fail after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null>
}

/** `node <bin> …args` in `cwd`, in its own process group, SIGKILLed whole by `cleanups`. */
export function startApp(cleanups: Cleanups, cwd: string, bin: string, args: readonly string[], env: Record<string, string> = {}): AppProcess {
  const child = spawn(process.execPath, [path.join(cwd, 'node_modules', bin), ...args], { cwd, env: appEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let text = ''
  let code: number | null | undefined
  const onData = (d: Buffer): void => {
    text += d.toString()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const closed = new Promise<void>((resolve) => child.on('close', (c) => ((code = c), resolve())))
  cleanups.push(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  })
  // eslint-disable-next-line no-control-regex
  const plain = (): string => text.replace(/\u001b\[[0-9;]*m/g, '')
  return {
    child,
    output: plain,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(plain())
          if (m) done(undefined, m)
        }
        const done = (error?: Error, m?: RegExpExecArray): void => {
          clearTimeout(timer)
          child.stdout!.off('data', check)
          child.stderr!.off('data', check)
          if (error) reject(error)
          else resolve(m!)
        }
        const timer = setTimeout(() => done(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${plain()}`)), timeoutMs)
        child.stdout!.on('data', check)
        child.stderr!.on('data', check)
        void closed.then(() => done(new Error(`exited with ${code} before ${pattern}; output:\n${plain()}`)))
        check()
      })
    },
    async exited(timeoutMs = 120_000) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([closed, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms; output:\n${plain()}`)), timeoutMs)))])
      clearTimeout(timer)
      return code ?? null
    },
  }
}

/** The page's console errors and uncaught errors, collected from now on. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`)
  })
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  return errors
}

/** Annotate `selector` by the keyboard: focus it, Alt+Shift+A (unless annotate mode is on), Enter, type, Ctrl+Enter; resolves when the note is sent. */
export async function annotateByKeyboard(page: Page, selector: string, comment: string): Promise<void> {
  const annotate = page.locator('marginalia-overlay .annotate')
  await annotate.waitFor({ timeout: 30_000 })
  const sent = page.locator('marginalia-overlay .pin:not([data-waiting])')
  const before = await sent.count()
  await page.locator(selector).focus()
  if ((await annotate.getAttribute('aria-pressed')) !== 'true') await page.keyboard.press('Alt+Shift+A')
  await page.locator(selector).focus()
  await page.keyboard.press('Enter')
  await page.locator('marginalia-overlay .composer textarea').waitFor({ timeout: 10_000 })
  await page.keyboard.type(comment)
  await page.keyboard.press('Control+Enter')
  await sent.nth(before).waitFor({ timeout: 15_000 })
}

export interface AgentAnnotation {
  annotation: { comment: string; source?: AgentSource }
  sourceLines?: string
}

interface AgentSource {
  file?: string
  line?: number
  column?: number
  component?: string
  callSite?: { file: string; line?: number; column?: number }
  via?: string
}

/** The agent started as `.mcp.json` (written by init) says, in `dir`: every pending annotation, in full (get_annotation). */
export async function pendingFromAgent(cleanups: Cleanups, dir: string): Promise<AgentAnnotation[]> {
  const config = JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { command: string; args: string[] } } }
  const { command, args } = config.mcpServers.marginalia
  const client = new Client({ name: 'agent', version: '1.0.0' })
  cleanups.push(() => client.close())
  await client.connect(new StdioClientTransport({ command, args, cwd: dir, env: appEnv({ npm_config_update_notifier: 'false' }), stderr: 'pipe' }))
  const all = (await client.callTool({ name: 'get_all_pending', arguments: {} })) as CallToolResult
  if (all.isError) throw new Error(JSON.stringify(all.content))
  const ids = ((all.structuredContent as { annotations?: { id: string }[] }).annotations ?? []).map((a) => a.id)
  const out: AgentAnnotation[] = []
  for (const id of ids) {
    const one = (await client.callTool({ name: 'get_annotation', arguments: { id, images: false } })) as CallToolResult
    if (one.isError) throw new Error(JSON.stringify(one.content))
    out.push(one.structuredContent as unknown as AgentAnnotation)
  }
  return out
}
