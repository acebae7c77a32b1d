/**
 * What `init` writes, read by the agents' own command lines (installed from npm at pinned
 * versions, run without a login, in a project and a home directory of their own):
 * - Claude Code: `claude plugin validate --strict` accepts the personal plugin, `claude plugin list` loads
 *   it from the skills directory, `claude mcp list` connects the plugin's server and, once the
 *   person approves the project's `.mcp.json` server, `claude mcp get` connects that one too; the
 *   HTTP config the inbox's install links carry (this server's /health `mcp`) connects with the
 *   server's token taken from the environment.
 * - Gemini CLI: in a trusted folder `gemini mcp list` connects the server and `gemini skills
 *   list` finds the skill.
 * - Codex: `codex mcp get` reads the server from ~/.codex/config.toml, hooks are on, and the skill
 *   is in the prompt Codex builds (`codex debug prompt-input`). Codex connects to MCP servers
 *   only inside a session, which needs a login.
 * The packages are installed once into node_modules/.cache/marginalia-agent-clis (a few hundred
 * MB each; up to 5 minutes). Without the npm registry the tests are skipped, saying so; in CI
 * (CI=true) that is an error.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { makeProject, type Project } from './lib.js'

const cleanups = useCleanups()
const REPO = path.resolve(import.meta.dirname, '../../..')
const CACHE = path.join(REPO, 'node_modules', '.cache', 'marginalia-agent-clis')

const CLIS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.197' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0' },
  codex: { pkg: '@openai/codex', version: '0.171.0' },
} as const
type Cli = keyof typeof CLIS

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function run(command: string, args: readonly string[], cwd: string, env: Record<string, string | undefined>, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} did not finish in ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`))
    }, timeoutMs)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The CLI's executable, installed on first use; else why it could not be. */
async function install(cli: Cli): Promise<{ bin: string } | { error: string }> {
  const { pkg, version } = CLIS[cli]
  const dir = path.join(CACHE, `${cli}-${version}`)
  const bin = path.join(dir, 'node_modules', '.bin', cli)
  const stamp = path.join(dir, 'installed')
  if (existsSync(stamp) && existsSync(bin)) return { bin }
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `agent-cli-${cli}`, private: true }))
  try {
    const result = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${version}`], dir, { ...process.env }, 300_000)
    if (result.code !== 0 || !existsSync(bin)) throw new Error(result.stderr.trim().split('\n').slice(-3).join(' ') || `exit ${result.code}`)
    writeFileSync(stamp, `${pkg}@${version}\n`)
    return { bin }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    return { error: `npm install ${pkg}@${version} failed: ${e instanceof Error ? e.message : String(e)}` }
  }
}

const installed = new Map<Cli, { bin: string } | { error: string }>()
beforeAll(async () => {
  await Promise.all((Object.keys(CLIS) as Cli[]).map(async (cli) => installed.set(cli, await install(cli))))
}, 600_000)

/** The installed CLI, or the test is skipped (an error in CI) with why. */
function cliOr(cli: Cli, skip: (note: string) => never): string {
  const got = installed.get(cli)!
  if ('bin' in got) return got.bin
  const message = `[skipped] ${CLIS[cli].pkg} could not be installed (needs the npm registry): ${got.error}`
  if (process.env.CI) throw new Error(`${message}; CI must reach the npm registry`)
  process.stderr.write(`\n${message}\n`)
  return skip(message)
}

/** A project after `npm i -D marginalia` and `init --agent …`, with the agents' state in its own home. */
async function setUp(args: string[]): Promise<Project> {
  const p = makeProject(cleanups)
  // As npm installs it: the package in node_modules (npx --no-install resolves it there) and its command in .bin.
  symlinkSync(REPO, path.join(p.root, 'node_modules', 'marginalia'))
  const init = await runCli(['init', '--yes', ...args, '--dir', p.root], p.root, { HOME: p.home })
  expect(init.code, init.stderr).toBe(0)
  return p
}

/** The agents' environment: the project's home, no store or token from this one, no credentials, no update checks. */
function agentEnv(p: Project, extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, HOME: p.home, XDG_CONFIG_HOME: path.join(p.home, '.config'), MARGINALIA_STORE: '', MARGINALIA_TOKEN: '', DATABASE_URL: '', NO_COLOR: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ...extra }
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'CODEX_HOME', 'CLAUDE_CONFIG_DIR']) delete env[key]
  return env
}

describe('the agents’ own CLIs read what init writes', () => {
  it('Claude Code: the personal plugin validates and loads, its server and the project’s connect, and the inbox link’s HTTP config connects', { timeout: 90_000 }, async (ctx) => {
    const claude = cliOr('claude', (note) => ctx.skip(note))
    const p = await setUp(['--agent', 'claude', '--home-config'])
    const env = agentEnv(p)
    // Claude Code keeps a project's approvals by its git repository.
    expect((await run('git', ['init', '-q', '.'], p.root, env, 30_000)).code).toBe(0)
    const claudeRun = (...args: string[]): Promise<Run> => run(claude, args, p.root, env, 60_000)

    const plugin = path.join(p.home, '.claude', 'skills', 'marginalia')
    // --strict: a warning (a missing field the runtime tolerates) fails too.
    const validate = await claudeRun('plugin', 'validate', '--strict', plugin)
    expect(validate.code, validate.stdout + validate.stderr).toBe(0)
    expect(validate.stdout).toMatch(/Validation passed/)

    const plugins = await claudeRun('plugin', 'list')
    expect(plugins.stdout).toMatch(/marginalia@skills-dir[\s\S]*?Status: ✔ loaded/)

    // Before the person approves the project's server, only the plugin's connects.
    const list = await claudeRun('mcp', 'list')
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout).toMatch(/^plugin:marginalia:marginalia: .*marginalia\.mjs mcp - ✔ Connected$/m)
    expect(list.stdout).toMatch(/^marginalia: npx --no-install marginalia mcp - ⏸ Pending approval/m)

    // Approving it in Claude Code's prompt records the server in .claude/settings.local.json.
    writeFileSync(path.join(p.root, '.claude', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['marginalia'] }))
    const get = await claudeRun('mcp', 'get', 'marginalia')
    expect(get.stdout).toMatch(/Scope: Project config/)
    expect(get.stdout).toMatch(/Status: ✔ Connected/)

    // The config the inbox's install links carry, from what this server says on /health.
    const token = 'agent-cli-test-token'
    const serve = await startServeCli(cleanups, p.root, ['--token', token])
    const health = (await (await fetch(`${serve.url}/health`)).json()) as { mcp: { url: string; auth: string } }
    expect(health.mcp).toEqual({ url: `${serve.url}/mcp`, auth: 'server-token' })
    const config = JSON.stringify({ type: 'http', url: health.mcp.url, headers: { Authorization: 'Bearer ${MARGINALIA_TOKEN}' } })
    const add = await claudeRun('mcp', 'add-json', '--scope', 'local', 'marginalia-http', config)
    expect(add.code, add.stderr).toBe(0)
    const withToken = await run(claude, ['mcp', 'get', 'marginalia-http'], p.root, agentEnv(p, { MARGINALIA_TOKEN: token }), 60_000)
    expect(withToken.stdout).toMatch(/Status: ✔ Connected/)
    const without = await run(claude, ['mcp', 'get', 'marginalia-http'], p.root, agentEnv(p, { MARGINALIA_TOKEN: 'wrong' }), 60_000)
    expect(without.stdout).not.toMatch(/Status: ✔ Connected/)
  })

  it('Gemini CLI: in a trusted folder its server connects and the skill is found', { timeout: 90_000 }, async (ctx) => {
    const gemini = cliOr('gemini', (note) => ctx.skip(note))
    const p = await setUp(['--agent', 'gemini'])
    const env = agentEnv(p)
    // Gemini CLI ignores a project's settings until the person trusts the folder; this is what "Trust folder" records.
    mkdirSync(path.join(p.home, '.gemini'), { recursive: true })
    writeFileSync(path.join(p.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [p.root]: 'TRUST_FOLDER' }))

    // It prints the list on stderr.
    const list = await run(gemini, ['mcp', 'list'], p.root, env, 60_000)
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout + list.stderr).toMatch(/✓ marginalia: npx --no-install marginalia mcp \(stdio\) - Connected/)

    const skills = await run(gemini, ['skills', 'list'], p.root, env, 60_000)
    expect(skills.stdout).toMatch(/^marginalia \[Enabled\]$/m)
    expect(skills.stdout).toContain(path.join(p.root, '.agents', 'skills', 'marginalia', 'SKILL.md'))
  })

  it('Codex: its config names the server on this project, hooks are on, and the skill is in its prompt', { timeout: 90_000 }, async (ctx) => {
    const codex = cliOr('codex', (note) => ctx.skip(note))
    const p = await setUp(['--agent', 'codex', '--home-config'])
    const env = agentEnv(p)

    const get = await run(codex, ['mcp', 'get', 'marginalia', '--json'], p.root, env, 60_000)
    expect(get.code, get.stderr).toBe(0)
    const server = JSON.parse(get.stdout) as { enabled: boolean; transport: { type: string; command: string; args: string[] } }
    expect(server.enabled).toBe(true)
    expect(server.transport).toMatchObject({ type: 'stdio', command: 'npx', args: ['--no-install', 'marginalia', 'mcp', '--store', p.store, '--root', p.root] })

    const features = await run(codex, ['features', 'list'], p.root, env, 60_000)
    expect(features.stdout).toMatch(/^hooks\s+\S+\s+true$/m)

    const prompt = await run(codex, ['debug', 'prompt-input', 'hello'], p.root, env, 60_000)
    expect(prompt.code, prompt.stderr).toBe(0)
    expect(prompt.stdout).toContain('marginalia: Work the annotations a person leaves')
    expect(prompt.stdout).toContain('marginalia/SKILL.md')
  })
})
