/**
 * `marginalia doctor`: checks the set-up from where it is run, each with ✓/✗ and the fix: package
 * and Node version, the store this directory resolves to, the server on the configured port and the
 * store it serves, the overlay from the app's origin, the agent configs' store, a connected agent,
 * and a page's CSP (--url). Exit code 1 when something is wrong; --json for tools.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { VERSION } from '../version.js'
import { envPort, integerOption, isDatabaseUrl, storeFile, storeOption, STORE_USAGE } from './args.js'
import type { Command, Values } from './command.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { gitTrackedWarning } from './git-tracked.js'
import { detectFramework, readProject } from './frameworks/index.js'
import type { Framework } from './frameworks/types.js'
import { projectRoot } from './project.js'

type CheckStatus = 'ok' | 'warn' | 'fail'
export interface Check {
  name: string
  status: CheckStatus
  detail: string
  fix?: string
}

export const doctor: Command = {
  oneShot: true,
  summary: 'Check the set-up here: store, server, overlay, agent configs (✓/✗ with the fix)',
  usage: [
    'marginalia doctor [--store FILE] [--port PORT] [--origin URL] [--url URL] [--json]',
    '',
    'Checks the package and Node version; the store this directory resolves to, whether it is',
    'writable and whether git tracks its folder (it should not); the server on the port and which',
    "store it serves; whether the overlay loads from your app's origin; whether the agent configs",
    'in the project use the same store; whether an agent is connected; with --url, the page\'s',
    'Content-Security-Policy. Exit code 1 when a check fails.',
    '',
    'Options:',
    `  -s, --store FILE   ${STORE_USAGE}`,
    '  -p, --port PORT    the server\'s port (default $MARGINALIA_PORT or 4848)',
    '      --origin URL   your app\'s origin (default: your framework\'s dev server, e.g. http://localhost:5173 for Vite)',
    '      --url URL      also check this page\'s Content-Security-Policy allows the overlay',
    '      --json         print the checks as JSON',
  ].join('\n'),
  options: { ...storeOption, port: { type: 'string', short: 'p' }, origin: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } },
  run,
}

const MARK: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗' }

async function run(values: Values): Promise<void> {
  const root = projectRoot()
  const framework = detectFramework(readProject(root))
  const checks = await diagnose({
    store: storeFile(values),
    port: integerOption(values, 'port', envPort(), 1, 65_535),
    root,
    origin: (values.origin as string | undefined) ?? framework.devOrigin,
    framework,
    ...(values.url !== undefined ? { url: String(values.url) } : {}),
  })
  if (values.json === true) process.stdout.write(JSON.stringify({ ok: checks.every((c) => c.status !== 'fail'), checks }, null, 2) + '\n')
  else for (const c of checks) process.stdout.write(`${MARK[c.status]} ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}\n`)
  if (checks.some((c) => c.status === 'fail')) process.exitCode = 1
}

export interface DoctorInput {
  store: string
  port: number
  origin: string
  root: string
  /** The framework the project is built with: its dev server and whether that server starts ours. */
  framework?: Framework
  url?: string
}

export async function diagnose(input: DoctorInput): Promise<Check[]> {
  const checks: Check[] = []
  const major = Number(process.versions.node.split('.')[0])
  checks.push(
    major >= 20
      ? { name: 'package', status: 'ok', detail: `marginalia ${VERSION} on Node ${process.versions.node}` }
      : { name: 'package', status: 'fail', detail: `Node ${process.versions.node} is too old`, fix: 'use Node 20 or newer' },
  )
  const project = readProject(input.root)
  const framework = input.framework ?? detectFramework(project)
  const unsupported = framework.unsupported?.(project)
  checks.push(
    unsupported === undefined
      ? { name: 'framework', status: 'ok', detail: `${framework.name} (dev server ${framework.devOrigin})` }
      : { name: 'framework', status: 'fail', detail: unsupported },
  )
  checks.push(storeCheck(input.store))
  const tracked = isDatabaseUrl(input.store) ? undefined : gitTrackedWarning(input.store)
  if (tracked) checks.push({ name: 'git', status: 'warn', ...tracked })

  const base = `http://127.0.0.1:${input.port}`
  const health = await fetchHealth(base)
  if (!health) {
    checks.push({ name: 'server', status: 'fail', detail: `nothing answers on port ${input.port}`, fix: framework.startsServer ? `start your ${framework.name} dev server (it starts the Marginalia server) or run \`npx --no-install marginalia serve\`` : 'run `npx --no-install marginalia serve` beside your dev server' })
  } else if (!servesStore(health, input.store)) {
    const other = health.store?.location
    checks.push({
      name: 'server',
      status: 'fail',
      detail: `the server on port ${input.port} serves ${other ?? 'another store'}, not this project's store ${input.store}`,
      fix: `stop that server and start it in this project${other !== undefined ? `, or pass --store ${other} to the agent` : ''}`,
    })
  } else {
    checks.push({ name: 'server', status: 'ok', detail: `marginalia ${health.version ?? '?'} on port ${input.port} serves ${health.store?.location ?? 'this store'}` })
  }

  if (health) {
    try {
      const res = await fetch(`${base}/overlay.js`, { method: 'HEAD', headers: { Origin: input.origin }, signal: AbortSignal.timeout(2000) })
      checks.push(
        res.ok
          ? { name: 'overlay', status: 'ok', detail: `${base}/overlay.js loads from ${input.origin}` }
          : { name: 'overlay', status: 'fail', detail: `${base}/overlay.js answers ${res.status} to a page on ${input.origin}`, fix: `start the server with --allow-origin ${input.origin}` },
      )
    } catch (e) {
      checks.push({ name: 'overlay', status: 'fail', detail: `could not load ${base}/overlay.js: ${e instanceof Error ? e.message : String(e)}` })
    }
  }

  checks.push(agentConfigCheck(input.root, input.store))
  if (health?.agent) {
    checks.push(
      health.agent.connected
        ? { name: 'agent', status: 'ok', detail: `connected (${health.agent.sessions} session(s), ${health.agent.watching} listening)` }
        : { name: 'agent', status: 'warn', detail: 'no agent connected to the server right now', fix: 'start your agent in this project (it launches `marginalia mcp` from its config)' },
    )
  }
  if (input.url !== undefined) checks.push(await cspCheck(input.url, base))
  return checks
}

function storeCheck(file: string): Check {
  // The nearest existing directory on the way to the file must be writable (the store creates the rest).
  let dir = path.dirname(file)
  while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  try {
    if (!statSync(dir).isDirectory()) return { name: 'store', status: 'fail', detail: `${file}: ${dir} is a file, not a directory`, fix: 'pass --store with a path in a directory' }
    accessSync(existsSync(file) ? file : dir, constants.W_OK)
    return { name: 'store', status: 'ok', detail: `${file} (writable)` }
  } catch {
    return { name: 'store', status: 'fail', detail: `${file} is not writable`, fix: `make ${dir} writable, or pass --store with a writable path` }
  }
}

/** The `--store` a config entry pins, resolved against the project (undefined: none pinned). */
function pinnedStore(entry: unknown, root: string): string | undefined {
  const args = (entry as { args?: unknown } | undefined)?.args
  if (!Array.isArray(args)) return undefined
  const i = args.indexOf('--store')
  const value: unknown = i >= 0 ? args[i + 1] : undefined
  return typeof value === 'string' ? path.resolve(root, value) : undefined
}

function agentConfigCheck(root: string, store: string): Check {
  const files: [string, 'mcpServers' | 'servers'][] = [
    ['.mcp.json', 'mcpServers'],
    ['.cursor/mcp.json', 'mcpServers'],
    ['.vscode/mcp.json', 'servers'],
  ]
  const found: string[] = []
  const wrong: string[] = []
  for (const [name, key] of files) {
    const file = path.join(root, name)
    if (!existsSync(file)) continue
    let entry: unknown
    try {
      entry = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown> | undefined>)[key]?.marginalia
    } catch {
      wrong.push(`${name} is not valid JSON`)
      continue
    }
    if (entry === undefined) continue
    const pinned = pinnedStore(entry, root)
    if (pinned !== undefined && pinned !== store) wrong.push(`${name} uses ${pinned}`)
    else found.push(name)
  }
  if (wrong.length > 0) return { name: 'agent config', status: 'fail', detail: `${wrong.join('; ')}, not ${store}`, fix: 'run `npx --no-install marginalia init` to pin this project\'s store' }
  if (found.length === 0) return { name: 'agent config', status: 'fail', detail: `no MCP config for marginalia in ${root}`, fix: 'run `npx --no-install marginalia init`' }
  return { name: 'agent config', status: 'ok', detail: `${found.join(', ')} use this store` }
}

/** Whether a CSP directive list allows loading a script from / connecting to `origin`. */
function allows(sources: string[] | undefined, origin: string): boolean {
  if (sources === undefined) return true
  return sources.some((s) => s === '*' || s === origin || s === 'http:' || origin.startsWith(s.replace(/\/$/, '')))
}

async function cspCheck(url: string, base: string): Promise<Check> {
  let header: string | null
  try {
    header = (await fetch(url, { signal: AbortSignal.timeout(5000) })).headers.get('content-security-policy')
  } catch (e) {
    return { name: 'csp', status: 'fail', detail: `could not load ${url}: ${e instanceof Error ? e.message : String(e)}` }
  }
  if (header === null) return { name: 'csp', status: 'ok', detail: `${url} sends no Content-Security-Policy` }
  const directives = new Map(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((p) => p[0])
      .map((p) => [p[0]!.toLowerCase(), p.slice(1)] as const),
  )
  const fallback = directives.get('default-src')
  const problems: string[] = []
  if (!allows(directives.get('script-src-elem') ?? directives.get('script-src') ?? fallback, base)) problems.push('script-src')
  if (!allows(directives.get('connect-src') ?? fallback, base)) problems.push('connect-src')
  return problems.length === 0
    ? { name: 'csp', status: 'ok', detail: `${url}'s Content-Security-Policy allows ${base}` }
    : { name: 'csp', status: 'fail', detail: `${url}'s Content-Security-Policy blocks ${base} (${problems.join(', ')})`, fix: `add ${base} to ${problems.join(' and ')} in development` }
}
