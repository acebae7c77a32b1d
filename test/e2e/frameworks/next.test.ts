/**
 * Next.js set up by `marginalia init` alone, on apps made by create-next-app 16.4.3
 * (test/fixtures/frameworks/next-app: App Router, Tailwind's turbopack rule; next-pages: Pages
 * Router), installed by `npm run fixtures`. First what init writes and what withMarginalia does
 * to a config in each phase (fast, no server); then, in place in the fixtures (every file init or
 * a build adds is removed after, every file changed restored): `next dev` with Turbopack and with
 * webpack, Chromium annotating by the keyboard, an MCP client started from the config init wrote
 * reading the exact file:line, component and call site, no console error in the page; and one
 * preview build (`MARGINALIA_SOURCES=ids next build`, `next start`) whose ids resolve through the
 * manifest it wrote.
 */
import { describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Page } from 'playwright-core'
import { withMarginalia } from '../../../src/integrations/next.js'
import { wrapNextConfig } from '../../../src/cli/frameworks/next.js'
import { diagnose } from '../../../src/cli/doctor.js'
import { useChromium } from '../../helpers/chromium.js'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { eventually } from '../../helpers/eventually.js'
import { testDir } from '../../helpers/store.js'
import type { Cleanups } from '../../helpers/cleanup.js'
import { freePort } from '../../helpers/ports.js'

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/frameworks')
const chromium = useChromium()
const { cleanups } = chromium

function installed(name: string): boolean {
  const ok = existsSync(path.join(FIXTURES, name, 'node_modules/next/package.json')) && existsSync(path.join(FIXTURES, name, 'node_modules/.bin/marginalia'))
  if (!ok && process.env.CI) throw new Error(`fixture ${name} is not installed: run npm run fixtures`)
  if (!ok) process.stderr.write(`\n[skipped] fixture ${name} is not installed: npm run fixtures ${name}\n`)
  return ok
}
const apps = chromium.enabled && installed('next-app') && installed('next-pages')

/** 1-based line and column of the first `needle` in `file`. */
function positionOf(file: string, needle: string): { line: number; column: number } {
  const lines = readFileSync(file, 'utf8').split('\n')
  const line = lines.findIndex((l) => l.includes(needle))
  if (line < 0) throw new Error(`${needle} not in ${file}`)
  return { line: line + 1, column: lines[line]!.indexOf(needle) + 1 }
}

/** Every file under `dir` but node_modules and .next (paths relative to dir), with its bytes. */
function filesOf(dir: string, rel = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = path.join(rel, e.name)
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== '.next') for (const [k, v] of filesOf(dir, p)) out.set(k, v)
    } else if (e.isFile()) out.set(p, readFileSync(path.join(dir, p)))
  }
  return out
}

/** The store the agent init configured uses: the project's own (the committed config names no path, so it works in a clone). */
function storeOf(dir: string): string {
  const args = (JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { args: string[] } } }).mcpServers.marginalia.args
  expect(args).toEqual(['--no-install', 'marginalia', 'mcp'])
  return path.join(dir, '.marginalia', 'store.json')
}

/** Use fixture `name` in place: after the test, files added are removed and files changed restored. */
function useFixture(name: string, c: Cleanups): string {
  const dir = path.join(FIXTURES, name)
  const before = filesOf(dir)
  const topLevel = new Set(readdirSync(dir))
  c.push(() => {
    for (const entry of readdirSync(dir)) if (!topLevel.has(entry)) rmSync(path.join(dir, entry), { recursive: true, force: true })
    const now = filesOf(dir)
    for (const file of now.keys()) if (!before.has(file)) rmSync(path.join(dir, file), { force: true })
    for (const [file, bytes] of before) if (!now.get(file)?.equals(bytes)) writeFileSync(path.join(dir, file), bytes)
  })
  return dir
}

/** `next <args>` in `dir`, in a process group of its own (Next.js starts children) killed after the test. */
function runNext(c: Cleanups, dir: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(dir, 'node_modules/next/dist/bin/next'), ...args], {
    cwd: dir,
    // Next.js sets NODE_ENV itself (vitest's 'test' would make it warn and behave otherwise).
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_ENV')), NEXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d))
  child.stderr!.on('data', (d: Buffer) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  c.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
      await exited
    }
  })
  return { child, output: () => out, exited }
}

/** Wait until `url` answers 200 with a body containing `needle`; its body. */
async function served(url: string, needle: string, output: () => string, timeoutMs = 90_000): Promise<string> {
  let body = ''
  try {
    await eventually(async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) }).catch(() => undefined)
      body = res?.ok ? await res.text() : ''
      return body.includes(needle)
    }, timeoutMs).toBe(true)
  } catch (e) {
    throw new Error(`${url} did not serve ${needle}: ${String(e)}\n${output()}`)
  }
  return body
}

const ui = (page: Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

/** Annotate `target` as a keyboard user does: Alt+Shift+A, pick it, type, Ctrl+Enter. */
async function annotateByKeyboard(page: Page, target: string, comment: string): Promise<void> {
  if ((await ui(page, '.annotate').getAttribute('aria-pressed')) !== 'true') await page.keyboard.press('Alt+Shift+A')
  await eventually(() => ui(page, '.annotate').getAttribute('aria-pressed')).toBe('true')
  await page.locator(target).first().hover()
  await page.locator(target).first().click()
  await ui(page, '.composer textarea').pressSequentially(comment)
  await ui(page, '.composer textarea').press('Control+Enter')
  await eventually(() => ui(page, '.composer').isVisible()).toBe(false)
}

/** The page's console errors and uncaught errors, from now on. */
function consoleErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(e.message))
  return errors
}

interface AgentSource {
  file?: string
  line?: number
  column?: number
  component?: string
  via?: string
  callSite?: { file: string; line?: number; column?: number; component?: string }
}

/** An MCP client started exactly as .mcp.json (written by init) says; the pending annotations it reads. */
async function agentReads(c: Cleanups, dir: string, comments: string[]): Promise<Map<string, AgentSource | undefined>> {
  const config = JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { command: string; args: string[] } } }
  const { command, args } = config.mcpServers.marginalia
  const client = new Client({ name: 'next-test-agent', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, cwd: dir, stderr: 'pipe' }))
  c.push(() => client.close())
  const found = new Map<string, AgentSource | undefined>()
  const ids = new Map<string, string>()
  await eventually(async () => {
    const result = (await client.callTool({ name: 'get_all_pending', arguments: {} })) as { structuredContent?: { annotations?: { id: string; comment: string }[] } }
    for (const a of result.structuredContent?.annotations ?? []) if (comments.includes(a.comment)) ids.set(a.comment, a.id)
    return ids.size
  }, 20_000).toBe(comments.length)
  for (const [comment, id] of ids) {
    const result = (await client.callTool({ name: 'get_annotation', arguments: { id } })) as { structuredContent?: { annotation?: { source?: AgentSource } } }
    found.set(comment, result.structuredContent?.annotation?.source)
  }
  return found
}

describe('init and withMarginalia on Next.js (no server)', () => {
  it('wraps the exported config in its own style, keeps what is there, and leaves a wrapped one alone', () => {
    const tailwind = readFileSync(path.join(FIXTURES, 'next-app/next.config.ts'), 'utf8')
    const wrapped = wrapNextConfig(tailwind, 'next.config.ts')!
    expect(wrapped).toContain('import { withMarginalia } from "marginalia/next";\n')
    expect(wrapped).toContain('export default withMarginalia(nextConfig);')
    expect(wrapped.replace('import { withMarginalia } from "marginalia/next";\n', '').replace('withMarginalia(nextConfig)', 'nextConfig')).toBe(tailwind)
    expect(wrapNextConfig(wrapped, 'next.config.ts')).toBe(wrapped)
    expect(wrapNextConfig("const path = require('path')\nmodule.exports = { distDir: 'out' }\n", 'next.config.js')).toBe(
      "const path = require('path')\nconst { withMarginalia } = require('marginalia/next')\nmodule.exports = withMarginalia({ distDir: 'out' })\n",
    )
    expect(wrapNextConfig('export default function config(phase) {\n  return {}\n}\n', 'next.config.mjs')).toBe("import { withMarginalia } from 'marginalia/next'\n\nexport default withMarginalia(function config(phase) {\n  return {}\n})\n")
    expect(wrapNextConfig('const x = 1\n', 'next.config.mjs')).toBeNull()
  })

  it('init on a Pages Router app: next.config wrapped, instrumentation-client created, every change shown first; a second run changes nothing; Next.js 14 refused with what works', async () => {
    const { dir } = testDir(cleanups, 'marginalia-next-init-')
    cpSync(path.join(FIXTURES, 'next-pages'), dir, { recursive: true, filter: (src) => !/[\\/](?:node_modules|\.next)$/.test(src) })
    const first = await runCli(['init', '--yes'], dir)
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('framework: Next.js (next)')
    expect(first.stdout).toContain('change next.config.ts')
    expect(first.stdout).toContain('  + export default withMarginalia(nextConfig);')
    expect(first.stdout).toContain('create instrumentation-client.ts')
    expect(first.stdout).toContain('start your dev server (npm run dev): it starts the Marginalia server')
    expect(first.stdout).not.toContain('marginalia serve --root .')
    expect(first.stdout).not.toMatch(/vite/i)
    const config = readFileSync(path.join(dir, 'next.config.ts'), 'utf8')
    expect(config).toContain('"@tailwindcss/turbopack"')
    expect(config).toContain('reactStrictMode: true')
    expect(readFileSync(path.join(dir, 'instrumentation-client.ts'), 'utf8')).toContain('if (process.env.MARGINALIA_OVERLAY) {')
    const again = await runCli(['init', '--yes'], dir)
    expect(again.stdout).toContain('nothing to change')

    // An existing instrumentation-client keeps its code; the block is added after it.
    rmSync(path.join(dir, 'instrumentation-client.ts'))
    writeFileSync(path.join(dir, 'instrumentation-client.ts'), 'console.info("analytics")\n')
    await runCli(['init', '--yes'], dir)
    expect(readFileSync(path.join(dir, 'instrumentation-client.ts'), 'utf8')).toMatch(/^console\.info\("analytics"\)\n\n\/\/ Marginalia's overlay/)

    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    pkg.dependencies.next = '14.2.0'
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg))
    const old = await runCli(['init', '--yes'], dir)
    expect(old.code).not.toBe(0)
    expect(old.stderr).toContain('Next.js 14.2.0 is older than Next.js 16.0')
  })

  it('doctor knows Next.js: its dev server on :3000, the overlay checked from there, no word of Vite', async () => {
    const dir = path.join(FIXTURES, 'next-app')
    const checks = await diagnose({ store: path.join(testDir(cleanups).dir, 'store.json'), port: await freePort(), origin: 'http://localhost:3000', root: dir })
    expect(checks.find((c) => c.name === 'framework')).toMatchObject({ status: 'ok', detail: 'Next.js (dev server http://localhost:3000)' })
    expect(checks.find((c) => c.name === 'server')?.fix).toMatch(/^start your dev server: `(cd \S+ && )?npm run dev` \(it starts the Marginalia server on this port\)$/)
    expect(JSON.stringify(checks)).not.toMatch(/vite/i)
  })

  it('withMarginalia: next dev gets the loader beside the rules already there and the overlay URL; next build and next start nothing; MARGINALIA_SOURCES=ids a preview build whose fragments become the manifest', async () => {
    const userWebpack = (config: { module?: { rules?: unknown[] }; seen?: boolean }) => ({ ...config, seen: true })
    const config = { reactStrictMode: true, env: { KEEP: '1' }, turbopack: { rules: { '*.css': { loaders: ['@tailwindcss/turbopack'], as: '*.css' } } }, webpack: userWebpack }
    const dev = (await withMarginalia(config, { server: 'http://127.0.0.1:4900' })('phase-development-server', { defaultConfig: {} as typeof config })) as unknown as Record<string, never>
    expect(dev).toMatchObject({ reactStrictMode: true, env: { KEEP: '1', MARGINALIA_OVERLAY: 'http://127.0.0.1:4900/overlay.js' } })
    const rules = (dev.turbopack as unknown as { rules: Record<string, { loaders: { loader: string; options: Record<string, unknown> }[]; condition?: unknown }> }).rules
    expect(rules['*.css']).toEqual({ loaders: ['@tailwindcss/turbopack'], as: '*.css' })
    expect(rules['*.{js,jsx,tsx}']!.condition).toEqual({ not: 'foreign' })
    expect(rules['*.{js,jsx,tsx}']!.loaders[0]!.options).toEqual({ sourceLocations: 'paths' })
    const webpackOut = (dev.webpack as unknown as (c: object, ctx: { dev: boolean }) => { seen: boolean; module: { rules: { enforce: string }[] } })({ module: { rules: [] } }, { dev: true })
    expect(webpackOut.seen).toBe(true)
    expect(webpackOut.module.rules).toMatchObject([{ enforce: 'pre' }])

    for (const phase of ['phase-production-build', 'phase-production-server']) {
      const out = await withMarginalia(config)(phase, { defaultConfig: config })
      expect(out).toEqual({ ...config, env: { KEEP: '1', MARGINALIA_OVERLAY: '' } })
    }

    const { dir } = testDir(cleanups, 'marginalia-next-ids-')
    let userHook = false
    const user = { compiler: { runAfterProductionCompile: () => Promise.resolve(void (userHook = true)) } }
    const preview = (await withMarginalia(user, { sourceLocations: 'ids' })('phase-production-build', { defaultConfig: user })) as unknown as { experimental: object; webpack: (c: object, ctx: { dev: boolean }) => { cache?: unknown }; compiler: { runAfterProductionCompile: (m: { projectDir: string; distDir: string }) => Promise<void> }; turbopack: { rules: Record<string, { loaders: { options: unknown }[] }> }; env: Record<string, string> }
    expect(preview.env.MARGINALIA_OVERLAY).toBe('http://127.0.0.1:4848/overlay.js')
    expect(preview.turbopack.rules['*.{js,jsx,tsx}']!.loaders[0]!.options).toEqual({ sourceLocations: 'ids', fragments: path.join('.next', 'marginalia-sources') })
    // No module may come from a build cache: it would not be marked again, and would miss from the manifest.
    expect(preview.experimental).toEqual({ turbopackFileSystemCacheForBuild: false })
    expect(preview.webpack({ module: { rules: [] } }, { dev: false }).cache).toBe(false)
    mkdirSync(path.join(dir, '.next/marginalia-sources'), { recursive: true })
    writeFileSync(path.join(dir, '.next/marginalia-sources/b.json'), JSON.stringify({ file: 'app/b.tsx', ids: { zz01: 'app/b.tsx:3:5' } }))
    writeFileSync(path.join(dir, '.next/marginalia-sources/a.json'), JSON.stringify({ file: 'app/a.tsx', ids: { aa01: 'app/a.tsx:1:1' } }))
    await preview.compiler.runAfterProductionCompile({ projectDir: dir, distDir: path.join(dir, '.next') })
    expect(userHook).toBe(true)
    expect(JSON.parse(readFileSync(path.join(dir, 'marginalia-sources.json'), 'utf8'))).toEqual({ version: 1, sources: { aa01: 'app/a.tsx:1:1', zz01: 'app/b.tsx:3:5' } })
  })
})

describe.skipIf(!apps)('Next.js apps from create-next-app, set up by init alone', () => {
  it('App Router on next dev (Turbopack) alone — it starts the Marginalia server itself: a shared button in a Client Component and in a Server Component, a Server Component element — exact file:line, component and call site for the agent, no console error', { timeout: 150_000 }, async () => {
    const dir = useFixture('next-app', cleanups)
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    storeOf(dir)
    const port = await freePort()
    // Only `next dev`: no `marginalia serve` beside it.
    const next = runNext(cleanups, dir, ['dev', '-p', String(port), '-H', '127.0.0.1'], { MARGINALIA_URL: '', MARGINALIA_PORT: '' })
    const url = `http://127.0.0.1:${port}/`
    const html = await served(url, 'data-marginalia-source="app/components/Fruits.tsx:', next.output)
    expect(next.output()).toContain('Turbopack')
    const fruits = path.join(dir, 'app/components/Fruits.tsx')
    expect(html).toContain(`data-marginalia-source="app/components/Fruits.tsx:${positionOf(fruits, '<li key').line}:${positionOf(fruits, '<li key').column}"`)

    const { page } = await chromium.newPage()
    const errors = consoleErrors(page)
    await page.goto(url)
    await ui(page, '.agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 60_000 })
    await annotateByKeyboard(page, 'section.counter button.ui-button', 'client button')
    await annotateByKeyboard(page, 'li.fruit-pear', 'server list item')
    await annotateByKeyboard(page, 'section.fruits button.ui-button', 'button in a server component')

    const got = await agentReads(cleanups, dir, ['client button', 'server list item', 'button in a server component'])
    const button = positionOf(path.join(dir, 'components/ui/Button.tsx'), '<button')
    const counter = positionOf(path.join(dir, 'app/components/Counter.tsx'), '<Button')
    expect(got.get('client button')).toMatchObject({ file: 'components/ui/Button.tsx', ...button, component: 'Button', via: 'mark', callSite: { file: 'app/components/Counter.tsx', ...counter, component: 'Counter' } })
    expect(got.get('server list item')).toMatchObject({ file: 'app/components/Fruits.tsx', ...positionOf(fruits, '<li key'), component: 'Fruits' })
    expect(got.get('button in a server component')).toMatchObject({ file: 'components/ui/Button.tsx', ...button, callSite: { file: 'app/components/Fruits.tsx', ...positionOf(fruits, '<Button'), component: 'Fruits' } })
    expect(errors).toEqual([])
  })

  it('Pages Router on next dev --webpack: the shared button with its call site for the agent, no console error', { timeout: 150_000 }, async () => {
    const dir = useFixture('next-pages', cleanups)
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    const store = storeOf(dir)
    const serve = await startServeCli(cleanups, dir, ['--root', dir, '--store', store])
    const port = await freePort()
    const next = runNext(cleanups, dir, ['dev', '--webpack', '-p', String(port), '-H', '127.0.0.1'], { MARGINALIA_URL: serve.url })
    const url = `http://127.0.0.1:${port}/`
    await served(url, 'data-marginalia-source="components/ui/Button.tsx:', next.output)
    expect(next.output()).toContain('webpack')

    const { page } = await chromium.newPage()
    const errors = consoleErrors(page)
    await page.goto(url)
    await ui(page, '.agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 60_000 })
    await annotateByKeyboard(page, 'section.counter button.ui-button', 'pages button')
    await annotateByKeyboard(page, 'p.page-note', 'pages note')
    const got = await agentReads(cleanups, dir, ['pages button', 'pages note'])
    expect(got.get('pages button')).toMatchObject({
      file: 'components/ui/Button.tsx',
      ...positionOf(path.join(dir, 'components/ui/Button.tsx'), '<button'),
      component: 'Button',
      callSite: { file: 'components/Counter.tsx', ...positionOf(path.join(dir, 'components/Counter.tsx'), '<Button'), component: 'Counter' },
    })
    expect(got.get('pages note')).toMatchObject({ file: 'pages/index.tsx', ...positionOf(path.join(dir, 'pages/index.tsx'), '<p className="page-note"'), component: 'Home' })
    expect(errors).toEqual([])
  })

  it('preview build: MARGINALIA_SOURCES=ids next build writes data-mid ids and marginalia-sources.json; on next start an annotation reaches the agent with file:line from the manifest', { timeout: 240_000 }, async () => {
    const dir = useFixture('next-app', cleanups)
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    const store = storeOf(dir)
    const manifest = path.join(dir, 'marginalia-sources.json')
    // The preview build's pages talk to the server whose URL is built in: its port is chosen now,
    // and it starts once the build has written the manifest it reads.
    const serverPort = await freePort()
    const build = runNext(cleanups, dir, ['build'], { MARGINALIA_SOURCES: 'ids', MARGINALIA_URL: `http://127.0.0.1:${serverPort}` })
    const code = await build.exited
    expect(code, build.output()).toBe(0)
    const sources = (JSON.parse(readFileSync(manifest, 'utf8')) as { sources: Record<string, string> }).sources
    const button = positionOf(path.join(dir, 'components/ui/Button.tsx'), '<button')
    const buttonId = Object.keys(sources).find((id) => sources[id] === `components/ui/Button.tsx:${button.line}:${button.column}`)
    expect(buttonId).toBeDefined()
    const prerendered = readFileSync(path.join(dir, '.next/server/app/index.html'), 'utf8')
    expect(prerendered).toContain(`data-mid="${buttonId}"`)
    expect(prerendered).not.toContain('data-marginalia-source')
    // The overlay comes in by instrumentation-client's script, never as a tag in the HTML.
    expect(prerendered).not.toContain('overlay.js')

    await startServeCli(cleanups, dir, ['--root', dir, '--store', store, '--sources', manifest, '--port', String(serverPort)])
    const port = await freePort()
    const next = runNext(cleanups, dir, ['start', '-p', String(port), '-H', '127.0.0.1'], {})
    const url = `http://127.0.0.1:${port}/`
    await served(url, `data-mid="${buttonId}"`, next.output)
    const { page } = await chromium.newPage()
    const errors = consoleErrors(page)
    await page.goto(url)
    await ui(page, '.agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 60_000 })
    await annotateByKeyboard(page, 'section.counter button.ui-button', 'preview button')
    const got = await agentReads(cleanups, dir, ['preview button'])
    expect(got.get('preview button')).toMatchObject({ file: 'components/ui/Button.tsx', line: button.line, column: button.column, via: 'manifest' })
    expect(errors).toEqual([])
    expect(statSync(manifest).isFile()).toBe(true)
  })
})
