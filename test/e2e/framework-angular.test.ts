/**
 * Angular from `init` alone, on the app `ng new` made (test/fixtures/frameworks/angular, pinned by
 * its lockfile; `npm run fixtures angular` installs it), with a nested component and a known
 * button: `init --yes` adds the head snippet to a development-only index.html and wires `npm start`
 * to `marginalia dev -- ng serve`, run here as that script runs it (one command starts the project's
 * server on the port the page loads from, and `ng serve`); Chromium annotates the button by the
 * keyboard; an MCP client started from the .mcp.json init wrote gets the component, its chain and
 * the file of its class (Angular's dev debug info) with the source lines around it (`--root`).
 * Nothing Marginalia adds logs an error in the page; `doctor` knows Angular's dev server; `ng build`
 * carries nothing of it.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { useChromium } from '../helpers/chromium.js'
import { CLI, runCli } from '../helpers/cli.js'
import { spawnNode } from '../helpers/process.js'
import { testDir } from '../helpers/store.js'
import { freePort } from '../helpers/ports.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium
const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/frameworks/angular')
const installed = existsSync(path.join(FIXTURE, 'node_modules', '@angular', 'cli', 'bin', 'ng.js'))

describe.skipIf(!enabled)('Angular, set up by init', () => {
  it('init --yes, npm start (marginalia dev -- ng serve), a keyboard annotation on a nested component: the agent gets the component and its file', { timeout: 300_000 }, async () => {
    expect(installed, 'the Angular fixture is not installed: run `npm run fixtures angular`').toBe(true)
    const { dir } = testDir(cleanups, 'marginalia-angular-')
    cpSync(FIXTURE, dir, { recursive: true, filter: (src) => !/[\\/](node_modules|\.angular)$/.test(src) })
    symlinkSync(path.join(FIXTURE, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
    // The project's own port, as its dev server recorded it (a free one here); no MARGINALIA_PORT.
    const port = await freePort()
    mkdirSync(path.join(dir, '.marginalia'))
    writeFileSync(path.join(dir, '.marginalia', 'port'), `${port}\n`)
    const env = { MARGINALIA_PORT: '', NG_CLI_ANALYTICS: 'false' }

    const init = await runCli(['init', '--yes'], dir, env)
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toContain('framework: Angular (angular)')
    const workspace = JSON.parse(readFileSync(path.join(dir, 'angular.json'), 'utf8')) as { projects: Record<string, { architect: { build: { configurations: Record<string, { index?: unknown }> } } }> }
    // ng serve (development) gets the snippet; ng build (production) keeps the app's own index.html.
    expect(workspace.projects.angular!.architect.build.configurations.development!.index).toEqual({ input: 'src/index.marginalia.html', output: 'index.html' })
    expect(workspace.projects.angular!.architect.build.configurations.production!.index).toBeUndefined()
    expect(readFileSync(path.join(dir, 'src/index.html'), 'utf8')).toBe(readFileSync(path.join(FIXTURE, 'src/index.html'), 'utf8'))
    expect(readFileSync(path.join(dir, 'src/index.marginalia.html'), 'utf8')).toContain(`<script src="http://127.0.0.1:${port}/loader.js" data-project="${path.basename(dir)}"></script>`)
    // Running it again changes nothing.
    expect((await runCli(['init', '--yes'], dir, env)).stdout).toContain('nothing to change')

    // `npm start`: `marginalia dev -- ng serve`, with `ng` as npm resolves it and a free port for ng serve.
    expect((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start).toBe('marginalia dev -- ng serve')
    const ngPort = await freePort()
    const ng = spawnNode(cleanups, [CLI, 'dev', '--', process.execPath, path.join(dir, 'node_modules/@angular/cli/bin/ng.js'), 'serve', '--port', String(ngPort), '--host', '127.0.0.1'], { cwd: dir, env: { ...env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '' } })
    // Stopped as Ctrl+C in a terminal stops it: `marginalia dev` stops ng serve and its server with it.
    cleanups.push(async () => {
      ng.child.kill('SIGTERM')
      await ng.exited(30_000)
    })
    await ng.waitFor('stderr', `inbox http://127.0.0.1:${port}/`, 20_000)
    await ng.waitFor('stdout', /Local:\s+http:\/\/127\.0\.0\.1:\d+/, 150_000)

    const { page } = await chromium.newPage()
    const errors: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`))
    await page.goto(`http://127.0.0.1:${ngPort}/`)
    await page.locator('marginalia-overlay .agent:not([data-state="offline"])').filter({ hasNotText: 'Connecting' }).waitFor({ timeout: 30_000 })
    await page.keyboard.press('Alt+Shift+A')
    await page.locator('#add').focus()
    await page.keyboard.press('Enter')
    await page.locator('marginalia-overlay .composer textarea').waitFor()
    await page.keyboard.type('Add one should add two')
    await page.keyboard.press('Control+Enter')

    const mcpJson = JSON.parse(readFileSync(path.join(dir, '.mcp.json'), 'utf8')) as { mcpServers: { marginalia: { command: string; args: string[] } } }
    const { command, args } = mcpJson.mcpServers.marginalia
    // No absolute path in the project's .mcp.json: `marginalia mcp` finds the project from where the agent starts it.
    expect(args).toEqual(['--no-install', 'marginalia', 'mcp'])
    const client = new Client({ name: 'angular-test', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command, args, cwd: dir, env: { ...(process.env as Record<string, string>), MARGINALIA_STORE: '' }, stderr: 'pipe' }))
    cleanups.push(() => client.close())
    const watched = await client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } })
    const [summary] = (watched.structuredContent as { annotations: { id: string; comment: string }[] }).annotations
    expect(summary!.comment).toBe('Add one should add two')
    const full = (await client.callTool({ name: 'get_annotation', arguments: { id: summary!.id, images: false } })).structuredContent as {
      annotation: { element?: { selector?: string }; source?: Record<string, unknown> }
      sourceLines?: string
    }
    expect(full.annotation.element?.selector).toBe('#add')
    expect(full.annotation.source).toMatchObject({ component: 'Counter', components: ['App', 'Counter'], file: 'src/app/counter.ts', line: 10, via: 'angular', exact: false })
    expect(full.sourceLines).toContain('> 10 | export class Counter {')
    expect(errors).toEqual([])

    // doctor knows Angular's dev server; a production build carries nothing of Marginalia.
    const doctor = await runCli(['doctor', '--json'], dir, env)
    const checks = JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    expect(checks.checks.find((c) => c.name === 'framework')).toMatchObject({ status: 'ok', detail: 'Angular (dev server http://localhost:4200)' })
    const build = spawnNode(cleanups, [path.join(dir, 'node_modules/@angular/cli/bin/ng.js'), 'build'], { cwd: dir, env })
    expect(await build.exited(120_000), build.stderr()).toBe(0)
    const built = readFileSync(path.join(dir, 'dist/angular/browser/index.html'), 'utf8')
    expect(built).toContain('<app-root>')
    expect(built).not.toContain('marginalia')
  })
})
