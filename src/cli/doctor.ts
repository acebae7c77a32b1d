/**
 * `marginalia doctor`: checks the set-up from where it is run, each with ✓/✗ and the fix: package
 * and Node version, the store this directory resolves to, the server on the configured port and the
 * store it serves, the overlay from the app's origin, the agent configs' store, each agent's push
 * path (its installed hooks and the Claude Code plugin's monitor, run with a sample), a connected
 * agent, and a page's CSP (--url). Exit code 1 when something is wrong; --json for tools.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import { VERSION } from '../version.js'
import { envPort, integerOption, isDatabaseUrl, storeFile, storeOption, STORE_USAGE } from './args.js'
import type { Command, Values } from './command.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { gitTrackedWarning } from './git-tracked.js'
import { detectFramework, readProject } from './frameworks/index.js'
import type { Framework } from './frameworks/types.js'
import { defaultStoreFile, projectRoot } from './project.js'
import { PROJECT_FILES } from './agent-configs.js'
import { configuredPort } from './configured-port.js'
import { pushChecks, type Check, type CheckStatus } from './doctor-push.js'
import { readJsonc } from './jsonc.js'
import { DEFAULT_PORT } from '../http/defaults.js'


export const doctor: Command = {
  oneShot: true,
  summary: 'Check the set-up here: store, server, overlay, agent configs, each agent\'s push path (✓/✗ with the fix)',
  usage: [
    'marginalia doctor [--store FILE] [--port PORT] [--origin URL] [--url URL] [--json]',
    '',
    'Checks the package and Node version; the store this directory resolves to, whether it is',
    'writable and whether git tracks its folder (it should not); the server on the port and which',
    "store it serves; whether the overlay loads from your app's origin; whether the agent configs",
    'in the project use the same store; which way a new annotation reaches each agent set up here',
    "(push, next turn or while it watches), running each hook init installed with the agent's own",
    'input and the Claude Code plugin\'s monitor against a sample store; whether an agent is',
    "connected; with --url, the page's Content-Security-Policy. Exit code 1 when a check fails.",
    '',
    'Options:',
    `  -s, --store FILE   ${STORE_USAGE}`,
    '  -p, --port PORT    the server\'s port (default $MARGINALIA_PORT, else the one the app uses: its integration\'s port option, .marginalia/port, or the project\'s own port; 4848 for `marginalia serve`)',
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
  const project = readProject(root)
  const framework = detectFramework(project)
  const configured = values.port !== undefined || process.env.MARGINALIA_PORT?.trim() ? undefined : configuredPort(project, framework)
  const checks = await diagnose({
    store: storeFile(values),
    port: configured?.port ?? integerOption(values, 'port', envPort(), 1, 65_535),
    ...(configured ? { portFrom: configured.from } : {}),
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
  /** Where the port comes from (said with it), when it was not given. */
  portFrom?: string
  origin: string
  root: string
  /** The framework the project is built with: its dev server and whether that server starts ours. */
  framework?: Framework
  url?: string
  /** Where the personal Claude Code plugin is looked for (default: the home directory). */
  home?: string
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
  const onPort = `port ${input.port}${input.portFrom !== undefined ? ` (${input.portFrom})` : ''}`
  const dev = here(input.root, devRun(framework, project))
  const serve = here(input.root, `npx --no-install marginalia serve${input.port === DEFAULT_PORT ? '' : ` --port ${input.port}`}`)
  const health = await fetchHealth(base)
  if (!health) {
    checks.push({ name: 'server', status: 'fail', detail: `nothing answers on ${onPort}`, fix: framework.startsServer ? `start your dev server: \`${dev}\` (it starts the Marginalia server on this port)` : `run \`${serve}\` beside your dev server (\`${dev}\`)` })
  } else if (!servesStore(health, input.store)) {
    const other = health.store?.location
    const theirs = health.store?.project !== undefined ? `project "${health.store.project}"` : 'another project'
    checks.push({
      name: 'server',
      status: 'fail',
      detail: `the server on ${onPort} serves ${theirs} (${other ?? `store ${health.store?.id ?? '?'}`}), not this project's store ${input.store}`,
      fix: `stop that server (the dev server or \`marginalia serve\` of ${theirs}), then ${framework.startsServer ? `restart this project's dev server: \`${dev}\`` : `run \`${serve}\``}`,
    })
  } else {
    checks.push({ name: 'server', status: 'ok', detail: `marginalia ${health.version ?? '?'} on ${onPort} serves ${health.store?.location ?? 'this store'}` })
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
  checks.push(...(await pushChecks(input.root, input.home ?? homedir())))
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

/** An argument with the agent's project variable put in: `${workspaceFolder}` is the project root. */
function expand(value: string, root: string): string {
  return value.replace(/\$\{workspaceFolder\}/g, root)
}

/** The store a config entry uses, resolved as `marginalia mcp` will: its --store, else the project of its --root (or this one). */
function entryStore(entry: unknown, root: string): string | undefined {
  const args = (entry as { args?: unknown } | undefined)?.args
  if (!Array.isArray(args)) return undefined
  const valueOf = (flag: string): string | undefined => {
    const i = args.indexOf(flag)
    const value: unknown = i >= 0 ? args[i + 1] : undefined
    return typeof value === 'string' ? expand(value, root) : undefined
  }
  const store = valueOf('--store')
  if (store !== undefined) return path.resolve(root, store)
  return defaultStoreFile(path.resolve(root, valueOf('--root') ?? '.'))
}

/** The absolute paths a project file's entry holds (a clone elsewhere would not find them). */
function absolutePaths(entry: unknown): string[] {
  const args = (entry as { args?: unknown } | undefined)?.args
  return Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string' && path.isAbsolute(a)) : []
}

function agentConfigCheck(root: string, store: string): Check {
  const found: string[] = []
  const wrong: string[] = []
  const pinned: string[] = []
  for (const { file: name, key } of Object.values(PROJECT_FILES)) {
    const file = path.join(root, name)
    if (!existsSync(file)) continue
    const read = readJsonc(readFileSync(file, 'utf8'))
    if ('error' in read) {
      wrong.push(`${name} cannot be read (${read.error})`)
      continue
    }
    const entry = (read.value as Record<string, Record<string, unknown> | undefined> | null)?.[key]?.marginalia
    if (entry === undefined) continue
    const uses = entryStore(entry, root)
    if (uses !== undefined && uses !== store) wrong.push(`${name} uses ${uses}`)
    else found.push(name)
    if (absolutePaths(entry).length > 0) pinned.push(name)
  }
  const init = here(root, 'npx --no-install marginalia init --yes')
  if (wrong.length > 0) return { name: 'agent config', status: 'fail', detail: `${wrong.join('; ')}, not ${store}`, fix: `run \`${init}\`: it rewrites the marginalia entry for this project (your other settings and comments stay)` }
  if (found.length === 0) return { name: 'agent config', status: 'fail', detail: `no MCP config for marginalia in ${root}`, fix: `run \`${init}\`` }
  if (pinned.length > 0) return { name: 'agent config', status: 'warn', detail: `${pinned.join(', ')} name absolute paths: a clone of this project elsewhere will not find them`, fix: `run \`${init}\` to write them without paths` }
  return { name: 'agent config', status: 'ok', detail: `${found.join(', ')} use this project's store` }
}

/** `command`, run from where the person stands: prefixed with `cd` to the project when they are elsewhere. */
function here(root: string, command: string): string {
  const rel = path.relative(process.cwd(), root)
  return rel === '' ? command : `cd ${/\s/.test(rel) ? JSON.stringify(rel) : rel} && ${command}`
}

/** The command that starts the app's dev server. */
function devRun(framework: Framework, project: { packageManager: string }): string {
  return framework.devCommand ?? (project.packageManager === 'npm' ? `npm run ${framework.devScript}` : `${project.packageManager} ${framework.devScript}`)
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
