/**
 * The package as a user gets it: `npm pack`, installed from the tarball into a new Vite + React app
 * (real packages). Its bin, `marginalia mcp` over the SDK client, `marginalia` and `marginalia/vite`
 * from ESM and CommonJS; then the first minute: `init --yes`, the dev server, an annotation made by
 * clicking in Chromium, seen by an SDK client started from the config `init` wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { browserTestsEnabled, launchChromium } from '../helpers/chromium.js'
import { until } from '../helpers/eventually.js'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '../..')
const VITE_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules/vite/package.json'), 'utf8')) as { version: string }).version
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']

let dir: string
let app: string
let home: string
let files: string[]
const children: ChildProcess[] = []

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'marginalia-install-'))
  app = path.join(dir, 'app')
  home = path.join(dir, 'home')
  mkdirSync(app)
  mkdirSync(home)
  // dist/ is built by the suite's global setup; --ignore-scripts keeps `prepare` from building it again.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT })
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[]
  files = info!.files.map((f) => f.path)
  // A fresh Vite + React app without "type": "module": its vite.config.js is loaded as CommonJS-adjacent.
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, version: '0.0.0', scripts: { dev: 'vite' } }, null, 2))
  writeFileSync(path.join(app, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body></html>\n')
  mkdirSync(path.join(app, 'src'))
  writeFileSync(
    path.join(app, 'src', 'main.jsx'),
    "import { createRoot } from 'react-dom/client'\nfunction App() {\n  return <main><h1>Shop</h1><button id=\"buy\">Buy</button></main>\n}\ncreateRoot(document.getElementById('root')).render(<App />)\n",
  )
  writeFileSync(path.join(app, 'vite.config.js'), "import { defineConfig } from 'vite'\nimport react from '@vitejs/plugin-react'\n\nexport default defineConfig({\n  plugins: [react()],\n})\n")
  const env = { ...process.env, HOME: home, npm_config_update_notifier: 'false' }
  await run('npm', ['i', path.join(dir, info!.filename), ...NPM_FLAGS], { cwd: app, env })
  await run('npm', ['i', '-D', `vite@${VITE_VERSION}`, '@vitejs/plugin-react', 'react', 'react-dom', ...NPM_FLAGS], { cwd: app, env })
}, 300_000)

afterAll(() => {
  for (const c of children) c.kill('SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** A clean environment for the app's processes: its own HOME, no store or port from the test runner. */
function appEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MARGINALIA_') && !k.startsWith('VITEST')) env[k] = v
  return { ...env, HOME: home, npm_config_update_notifier: 'false', ...extra }
}

describe('the packed package', () => {
  it('ships the built CLI, library, CommonJS builds, overlay, LICENSE; every source map carries its sources', () => {
    for (const f of ['dist/marginalia.mjs', 'dist/integrations/vite/vite-worker.mjs', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/integrations/vite/index.js', 'dist/integrations/vite/index.cjs', 'dist/overlay/overlay.js', 'LICENSE', 'README.md', 'package.json']) expect(files).toContain(f)
    const maps = files.filter((f) => f.endsWith('.map'))
    for (const m of maps) {
      const map = JSON.parse(readFileSync(path.join(app, 'node_modules', 'marginalia', m), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] }
      const missing = map.sources.filter((s, i) => typeof map.sourcesContent?.[i] !== 'string' && !files.includes(path.posix.join(path.posix.dirname(m), s)))
      expect({ map: m, missing }).toEqual({ map: m, missing: [] })
    }
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    expect(pkg.scripts.prepare).toBe('npm run build') // `npm i <git url>` and `npm pack` of a clone build dist/
  })

  it('runs its bin: --version, and marginalia mcp answers tools/list over the SDK client', async () => {
    const bin = path.join(app, 'node_modules', '.bin', 'marginalia')
    const { stdout } = await run(bin, ['--version'], { cwd: app, env: appEnv() })
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const client = new Client({ name: 'install-test', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: bin, args: ['mcp'], cwd: app, env: appEnv(), stderr: 'pipe' }))
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain('watch_annotations')
    } finally {
      await client.close()
    }
  }, 60_000)

  it('loads from ESM and from CommonJS: marginalia, marginalia/vite, marginalia/webpack, marginalia/loader and marginalia/next; a CommonJS store works', async () => {
    const esm = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('marginalia'); const v = await import('marginalia/vite'); const n = await import('marginalia/next'); console.log(typeof m.openStore, typeof v.default, typeof n.withMarginalia)"], { cwd: app, env: appEnv() })
    expect(esm.stdout.trim()).toBe('function function function')
    const cjs = await run(
      process.execPath,
      [
        '-e',
        "const m = require('marginalia'); const v = require('marginalia/vite'); const w = require('marginalia/webpack'); const l = require('marginalia/loader'); const n = require('marginalia/next'); m.openStore({ file: 'cjs/store.json' }).then(async (s) => { await s.createSession({ url: 'http://x/' }); await s.close(); console.log(typeof v.default, typeof w.marginaliaWebpack, typeof w.marginaliaRspack, typeof l.default, typeof n.withMarginalia, 'stored') })",
      ],
      { cwd: app, env: appEnv() },
    )
    expect(cjs.stdout.trim()).toBe('function function function function function stored')
  }, 60_000)

  it('TypeScript types both ways: an ES module and a CommonJS module (node16 resolution) type-check against the installed package', async () => {
    const check = path.join(app, 'types-check')
    mkdirSync(check, { recursive: true })
    writeFileSync(path.join(check, 'esm.mts'), "import { openStore, type Store } from 'marginalia'\nimport marginalia from 'marginalia/vite'\nexport const s: Promise<Store> = openStore()\nexport const p = marginalia({ port: 4900 })\n")
    writeFileSync(path.join(check, 'cjs.cts'), "import m = require('marginalia')\nimport vite = require('marginalia/vite')\nexport const s: Promise<m.Store> = m.openStore()\nexport const p = vite.default({ port: 4900 })\n")
    // An expected-error line proves the types are real, not `any`.
    writeFileSync(path.join(check, 'wrong.cts'), "import m = require('marginalia')\n// @ts-expect-error openStore takes options, not a number\nm.openStore(42)\n")
    writeFileSync(
      path.join(check, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, skipLibCheck: true, types: [], typeRoots: [path.join(ROOT, 'node_modules/@types')] }, include: ['*.mts', '*.cts'] }),
    )
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', check], { cwd: check, env: appEnv() }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? 'tsc failed' }))
    expect(`${result.stdout}${result.stderr}`.trim()).toBe('')
  }, 60_000)
})

describe.runIf(browserTestsEnabled())('the first minute in a new Vite + React app', () => {
  it('init --yes, npm run dev, annotate by click in Chromium: an SDK client configured from .mcp.json sees it', async () => {
    const init = await run('npx', ['--no-install', 'marginalia', 'init', '--yes'], { cwd: app, env: appEnv() })
    expect(init.stdout).toContain('wrote vite.config.js')
    expect(readFileSync(path.join(app, 'vite.config.js'), 'utf8')).toContain("import marginalia from 'marginalia/vite'")
    expect(readFileSync(path.join(app, '.gitignore'), 'utf8')).toContain('.marginalia/')
    // Running it again changes nothing.
    const again = await run('npx', ['--no-install', 'marginalia', 'init', '--yes'], { cwd: app, env: appEnv() })
    expect(again.stdout).toContain('nothing to change')

    // The dev server (Vite on a free port; the Marginalia server it starts too, via MARGINALIA_PORT=0).
    const vite = spawn(process.execPath, [path.join(app, 'node_modules/vite/bin/vite.js'), '--port', '0', '--strictPort'], { cwd: app, env: appEnv({ MARGINALIA_PORT: '0', VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' }), stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(vite)
    let out = ''
    vite.stdout.on('data', (d: Buffer) => (out += d))
    vite.stderr.on('data', (d: Buffer) => (out += d))
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`vite did not start:\n${out}`)), 30_000)
      vite.stdout.on('data', () => {
        const m = /Local:\s+(http:\/\/\S+?)\/?\s/.exec(out.replace(/\x1b\[[0-9;]*m/g, '')) // eslint-disable-line no-control-regex
        if (m) {
          clearTimeout(timer)
          resolve(m[1]!)
        }
      })
    })
    // Vite listens without waiting for Marginalia's server: its banner follows when it has started.
    await until(() => out.includes('marginalia: inbox'), `the plugin's banner in:\n${out}`, 30_000, 50)

    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const logs: string[] = []
      page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`))
      page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`))
      await page.goto(url)
      // When the app does not render, say why (the page's errors and the dev server's output).
      await page.locator('#buy').waitFor({ timeout: 20_000 }).catch(() => {
        throw new Error(`the app did not render #buy\npage:\n${logs.join('\n')}\nvite:\n${out}`)
      })
      await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 20_000 })
      await page.locator('marginalia-overlay .annotate').click()
      await page.locator('#buy').click()
      await page.locator('marginalia-overlay .composer textarea').fill('Make Buy bigger')
      await page.locator('marginalia-overlay .composer button[type="submit"]').click()
      await page.locator('marginalia-overlay .pin:not([data-waiting])').first().waitFor({ timeout: 10_000 }) // sent: not a pin still waiting in the outbox
    } finally {
      await browser.close()
    }

    // The agent, exactly as Claude Code would start it from the config init wrote.
    const config = JSON.parse(readFileSync(path.join(app, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { command: string; args: string[] } } }
    const { command, args } = config.mcpServers.marginalia
    const client = new Client({ name: 'agent', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command, args, cwd: app, env: appEnv(), stderr: 'pipe' }))
    try {
      const result = (await client.callTool({ name: 'get_all_pending', arguments: {} })) as CallToolResult
      expect(result.isError).toBeFalsy()
      expect(JSON.stringify(result.structuredContent)).toContain('Make Buy bigger')
    } finally {
      await client.close()
      vite.kill('SIGTERM')
    }
  }, 120_000)
})
