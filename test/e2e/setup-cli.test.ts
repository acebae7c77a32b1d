/** `marginalia init`, `marginalia doctor`, the per-project store and the two-store warning, as a person runs them (the built CLI). */
import { describe, expect, it } from 'vitest'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { createMemoryStore, startHttpServer, type HttpServer } from '../../src/index.js'
import { CLI, startServeCli } from '../helpers/cli.js'
import { testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'
import { freePort } from '../helpers/ports.js'

const cleanups = useCleanups()

interface Result {
  code: number
  stdout: string
  stderr: string
}

function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '', ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

/** A project: package.json, a src/ folder, its own HOME. */
function project(): { dir: string; home: string; store: string } {
  const { dir } = testDir(cleanups, 'marginalia-setup-')
  writeFileSync(path.join(dir, 'package.json'), '{"name":"app","private":true}\n')
  mkdirSync(path.join(dir, 'src'))
  mkdirSync(path.join(dir, 'home'))
  return { dir, home: path.join(dir, 'home'), store: path.join(dir, '.marginalia', 'store.json') }
}

async function serverFor(location: string): Promise<HttpServer> {
  const store = createMemoryStore()
  const http = await startHttpServer(store, { port: 0, log: () => {}, storeLocation: location })
  cleanups.push(async () => {
    await http.close()
    await store.close()
  })
  return http
}

interface DoctorJson {
  ok: boolean
  checks: { name: string; status: string; detail: string; fix?: string }[]
}
const check = (r: Result, name: string) => (JSON.parse(r.stdout) as DoctorJson).checks.find((c) => c.name === name)

describe('one store per project', () => {
  it('resolves the store from a subdirectory to the project root; .marginalia/ wins over package.json', async () => {
    const p = project()
    const fromSrc = await cli(['doctor', '--json', '--port', String(await freePort())], path.join(p.dir, 'src'))
    expect(check(fromSrc, 'store')?.detail).toContain(p.store)
    // A nested package with its own .marginalia/: that one is nearer.
    const nested = path.join(p.dir, 'src', 'pkg')
    mkdirSync(path.join(nested, '.marginalia'), { recursive: true })
    const fromNested = await cli(['doctor', '--json', '--port', String(await freePort())], nested)
    expect(check(fromNested, 'store')?.detail).toContain(path.join(nested, '.marginalia', 'store.json'))
  })

  it('/health reports the store location and id; marginalia mcp warns when the server on the port serves another store', async () => {
    const p = project()
    const other = project()
    const serve = await startServeCli(cleanups, other.dir)
    const health = (await (await fetch(`${serve.url}/health`)).json()) as { store: { location: string; id: string } }
    expect(health.store.location).toBe(other.store)
    expect(health.store.id).toMatch(/^[0-9a-f]{16}$/)
    const port = new URL(serve.url).port
    const child = spawn(process.execPath, [CLI, 'mcp'], { cwd: path.join(p.dir, 'src'), env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: port }, stdio: ['pipe', 'pipe', 'pipe'] })
    cleanups.push(() => child.kill('SIGKILL'))
    // The check runs when the first request past the handshake comes in, as an agent's tools/list.
    for (const message of [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ])
      child.stdin.write(JSON.stringify(message) + '\n')
    let stderr = ''
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no warning; stderr: ${stderr}`)), 15_000)
      child.stderr.on('data', (d: Buffer) => {
        stderr += d
        if (stderr.includes('warning:')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    expect(stderr).toContain(`serves the store ${other.store}, but this agent uses ${p.store}`)
    child.stdin.end()
    await once(child, 'exit')
  })
})

describe('marginalia doctor', () => {
  it('reports a missing server and a missing agent config, with fixes, exit code 1', async () => {
    const p = project()
    const r = await cli(['doctor', '--json', '--port', String(await freePort())], p.dir)
    expect(r.code).toBe(1)
    const out = JSON.parse(r.stdout) as DoctorJson
    expect(out.ok).toBe(false)
    expect(check(r, 'server')).toMatchObject({ status: 'fail', detail: expect.stringContaining('nothing answers') as unknown, fix: expect.stringContaining('marginalia serve') as unknown })
    expect(check(r, 'agent config')?.status).toBe('fail')
    const text = await cli(['doctor', '--port', String(await freePort())], p.dir)
    expect(text.stdout).toMatch(/^✗ server: nothing answers/m)
    expect(text.stdout).toMatch(/^✓ store: /m)
  })

  it('reports a server serving another store; all ✓ and exit 0 when server and agent config share the store', async () => {
    const p = project()
    const wrong = await serverFor('/elsewhere/.marginalia/store.json')
    const r = await cli(['doctor', '--json', '--port', new URL(wrong.url).port], p.dir)
    expect(r.code).toBe(1)
    expect(check(r, 'server')).toMatchObject({ status: 'fail', detail: expect.stringContaining('serves project "elsewhere" (/elsewhere/.marginalia/store.json)') as unknown })

    await cli(['init', '--yes'], p.dir, { HOME: p.home })
    // Installed in the project, as init's hooks expect (they run node_modules/.bin/marginalia).
    mkdirSync(path.join(p.dir, 'node_modules', '.bin'), { recursive: true })
    symlinkSync(CLI, path.join(p.dir, 'node_modules', '.bin', 'marginalia'))
    const right = await serverFor(p.store)
    const ok = await cli(['doctor', '--json', '--port', new URL(right.url).port], p.dir, { HOME: p.home })
    const out = JSON.parse(ok.stdout) as DoctorJson
    expect(out.checks.map((c) => [c.name, c.status])).toEqual([
      ['package', 'ok'],
      ['framework', 'ok'],
      ['store', 'ok'],
      ['server', 'ok'],
      ['overlay', 'ok'],
      ['agent config', 'ok'],
      ['push: Claude Code', 'ok'],
      ['push: Cursor', 'ok'],
      ['push: VS Code', 'ok'],
      ['agent', 'warn'], // nobody connected: a warning, not a failure
    ])
    expect(ok.code).toBe(0)
  })

  it('--url: a page whose CSP blocks the server fails the csp check', async () => {
    const p = project()
    const right = await serverFor(p.store)
    const { createServer: createHttp } = await import('node:http')
    const page = createHttp((_req, res) => res.writeHead(200, { 'Content-Security-Policy': "default-src 'self'" }).end('<p>hi</p>'))
    page.listen(0, '127.0.0.1')
    await once(page, 'listening')
    cleanups.push(() => new Promise((r) => page.close(r)))
    const url = `http://127.0.0.1:${(page.address() as { port: number }).port}/`
    const r = await cli(['doctor', '--json', '--port', new URL(right.url).port, '--url', url], p.dir)
    expect(check(r, 'csp')).toMatchObject({ status: 'fail', detail: expect.stringContaining('script-src, connect-src') as unknown })
  })
})

describe('marginalia init', () => {
  it('keeps other MCP servers, shows the change, leaves home configs alone under --yes unless --home-config; re-running changes nothing', async () => {
    const p = project()
    writeFileSync(path.join(p.dir, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: 'other' } } }))
    writeFileSync(path.join(p.dir, '.gitignore'), 'node_modules')
    const first = await cli(['init', '--yes', '--agent', 'claude', '--agent', 'codex'], p.dir, { HOME: p.home })
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('change .mcp.json')
    expect(first.stdout).toContain('skipped the MCP config of codex')
    expect(first.stdout).toContain('no build plugin for this set-up')
    // One way to connect, said by init: stdio, with the project root.
    expect(first.stdout).toContain('agents: claude connect over stdio')
    expect(existsSync(path.join(p.home, '.codex'))).toBe(false)
    const mcp = JSON.parse(readFileSync(path.join(p.dir, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { command: string; args?: string[] }> }
    expect(mcp.mcpServers.other).toEqual({ command: 'other' })
    // A committed file: no absolute path (marginalia mcp finds the project from where the agent starts it).
    expect(mcp.mcpServers.marginalia).toEqual({ command: 'npx', args: ['--no-install', 'marginalia', 'mcp'] })
    expect(readFileSync(path.join(p.dir, '.gitignore'), 'utf8')).toBe('node_modules\n.marginalia/\n')

    const withHome = await cli(['init', '--yes', '--agent', 'claude', '--agent', 'codex', '--home-config'], p.dir, { HOME: p.home })
    expect(withHome.stdout).toContain('create ')
    expect(readFileSync(path.join(p.home, '.codex', 'config.toml'), 'utf8')).toBe(`[mcp_servers.marginalia]\ncommand = "npx"\nargs = ["--no-install", "marginalia", "mcp", "--store", ${JSON.stringify(p.store)}, "--root", ${JSON.stringify(p.dir)}]\n`)
    const again = await cli(['init', '--yes', '--agent', 'claude', '--agent', 'codex', '--home-config'], p.dir, { HOME: p.home })
    expect(again.stdout).toContain('nothing to change')
  })

  it('refuses to ask questions without a terminal (exit 2), and --dry-run writes nothing', async () => {
    const p = project()
    const r = await cli(['init'], p.dir, { HOME: p.home })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--yes')
    const dry = await cli(['init', '--yes', '--dry-run'], p.dir, { HOME: p.home })
    expect(dry.stdout).toContain('create .mcp.json')
    expect(existsSync(path.join(p.dir, '.mcp.json'))).toBe(false)
  })
})

describe('usage errors', () => {
  it('suggests the nearest command or option, exit code 2', async () => {
    const { dir } = testDir(cleanups)
    const cmd = await cli(['serv'], dir)
    expect(cmd.code).toBe(2)
    expect(cmd.stderr).toContain('Did you mean "serve"?')
    const opt = await cli(['serve', '--prot', '1'], dir)
    expect(opt.code).toBe(2)
    expect(opt.stderr).toContain('Did you mean --port?')
  })
})

describe('serve', () => {
  it('prints the head snippet to paste, serves a favicon, honours MARGINALIA_PORT', async () => {
    const { dir } = testDir(cleanups)
    const serve = await startServeCli(cleanups, dir)
    expect(serve.stderr()).toContain(`<script src="${serve.url}/loader.js"></script>`)
    expect(serve.stderr()).toContain(`start it with \`npx --no-install marginalia serve --port ${new URL(serve.url).port}\``)
    const icon = await fetch(`${serve.url}/favicon.ico`)
    expect(icon.headers.get('content-type')).toBe('image/svg+xml')
    expect(await icon.text()).toContain('<svg')
    const port = await freePort()
    const child = spawn(process.execPath, [CLI, 'serve'], { cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', MARGINALIA_PORT: String(port) } })
    cleanups.push(() => child.kill('SIGKILL'))
    let stderr = ''
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(stderr)), 15_000)
      child.stderr.on('data', (d: Buffer) => {
        stderr += d
        if (stderr.includes('Overlay:')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    expect(stderr).toContain(`URL:     http://127.0.0.1:${port}/`)
    const bad = await cli(['serve'], dir, { MARGINALIA_PORT: 'abc' })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('MARGINALIA_PORT must be a port number')
  })
})
