/**
 * `marginalia init`: set Marginalia up in the user's project. Detects the framework and package
 * manager, adds the Vite plugin to vite.config.* (or prints the script tag), writes MCP configs for
 * the agents picked — each pinned to this project's store so agent and browser share one — adds
 * `.marginalia/` to .gitignore, and says what it did. Every change to an existing file is shown
 * before it is written; running it again changes nothing.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline/promises'
import { DEFAULT_PORT } from '../http/defaults.js'
import { listOption } from './args.js'
import { UsageError, type Command, type Values } from './command.js'
import { projectRoot } from './project.js'

/** Agents whose config `init` can write. Project files first; `codex` and `windsurf` live in your home directory. */
const AGENTS = ['claude', 'cursor', 'vscode', 'windsurf', 'codex'] as const
type Agent = (typeof AGENTS)[number]
const PROJECT_AGENTS: readonly Agent[] = ['claude', 'cursor', 'vscode']
const HOME_AGENTS: readonly Agent[] = ['windsurf', 'codex']

export const init: Command = {
  oneShot: true,
  summary: 'Set Marginalia up in this project: Vite plugin, agent MCP configs, .gitignore',
  usage: [
    'marginalia init [--yes] [--agent NAME ...] [--home-config] [--dir DIR] [--dry-run]',
    '',
    'Run in your app. Detects the framework and package manager; adds the Vite plugin line to',
    'vite.config.* (or prints the <script> tag for other setups); writes the MCP config of each',
    'agent you pick, pinned to this project\'s store; adds .marginalia/ to .gitignore. A change to an',
    'existing file is shown before it is written; running init again changes nothing.',
    '',
    'Options:',
    '  -y, --yes            do not ask: project configs for Claude Code, Cursor and VS Code',
    `      --agent NAME     only these agents (repeatable): ${AGENTS.join(', ')}`,
    '      --home-config    with --yes: also write configs in your home directory (Codex, Windsurf)',
    '      --dir DIR        the project (default: found from here: nearest .marginalia/, package.json or .git)',
    '      --dry-run        show what would change, write nothing',
  ].join('\n'),
  options: {
    yes: { type: 'boolean', short: 'y' },
    agent: { type: 'string', multiple: true },
    'home-config': { type: 'boolean' },
    dir: { type: 'string' },
    'dry-run': { type: 'boolean' },
  },
  run,
}

interface Detected {
  framework: 'vite' | 'next' | 'other'
  packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun'
  viteConfig?: string
}

function detect(root: string): Detected {
  const pkg = readJson(path.join(root, 'package.json')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } | undefined
  const deps = { ...pkg?.dependencies, ...pkg?.devDependencies }
  const viteConfig = ['ts', 'mts', 'js', 'mjs', 'cjs', 'cts'].map((e) => path.join(root, `vite.config.${e}`)).find((f) => existsSync(f))
  const framework = viteConfig || 'vite' in deps ? 'vite' : 'next' in deps ? 'next' : 'other'
  const packageManager = existsSync(path.join(root, 'pnpm-lock.yaml'))
    ? 'pnpm'
    : existsSync(path.join(root, 'yarn.lock'))
      ? 'yarn'
      : existsSync(path.join(root, 'bun.lockb')) || existsSync(path.join(root, 'bun.lock'))
        ? 'bun'
        : 'npm'
  return viteConfig ? { framework, packageManager, viteConfig } : { framework, packageManager }
}

/** The command an agent runs: the project's own install (never a download), pinned to the store. */
function agentCommand(storeFile: string): { command: string; args: string[] } {
  return { command: 'npx', args: ['--no-install', 'marginalia', 'mcp', '--store', storeFile] }
}

/** One planned change: a file and its new text (undefined old text: a new file). */
interface Change {
  file: string
  before: string | undefined
  after: string
  what: string
}

/** The changes `init` would make in `root` for `agents` (files whose text would not change are left out). */
function plan(root: string, agents: readonly Agent[], home: string = os.homedir()): { changes: Change[]; notes: string[] } {
  const storeFile = path.join(root, '.marginalia', 'store.json')
  const { command, args } = agentCommand(storeFile)
  const changes: Change[] = []
  const notes: string[] = []
  const change = (file: string, after: string, what: string): void => {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    if (before !== after) changes.push({ file, before, after, what })
  }
  const jsonConfig = (file: string, key: 'mcpServers' | 'servers', entry: object, what: string): void => {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    let data: Record<string, unknown> = {}
    if (before !== undefined) {
      try {
        data = JSON.parse(before) as Record<string, unknown>
      } catch {
        notes.push(`${rel(root, file)} is not plain JSON (comments?); add this under "${key}" yourself: "marginalia": ${JSON.stringify(entry)}`)
        return
      }
    }
    const servers = { ...(data[key] as Record<string, unknown> | undefined), marginalia: entry }
    const next = JSON.stringify({ ...data, [key]: servers }, null, 2) + '\n'
    if (before !== undefined && JSON.stringify(JSON.parse(before)) === JSON.stringify(JSON.parse(next))) return
    change(file, next, what)
  }

  // The app side.
  const d = detect(root)
  if (d.viteConfig) {
    const text = readFileSync(d.viteConfig, 'utf8')
    const next = addVitePlugin(text, d.viteConfig.endsWith('.cjs') || d.viteConfig.endsWith('.cts'))
    if (next === null) notes.push(`could not find "plugins: [" in ${rel(root, d.viteConfig)}: add  import marginalia from 'marginalia/vite'  and  marginalia()  to its plugins yourself`)
    else change(d.viteConfig, next, 'the Vite plugin (starts the server and injects the overlay in dev)')
  } else {
    notes.push(`no vite.config.* here: run \`npx --no-install marginalia serve\` beside your dev server and paste into your page: <script src="http://127.0.0.1:${DEFAULT_PORT}/overlay.js" defer data-marginalia></script>`)
  }

  // The store directory, so every command started anywhere in the project finds it.
  const gitignore = path.join(root, '.gitignore')
  const ignored = existsSync(gitignore) ? readFileSync(gitignore, 'utf8') : ''
  if (!/^\/?\.marginalia\/?\s*$/m.test(ignored)) change(gitignore, `${ignored}${ignored === '' || ignored.endsWith('\n') ? '' : '\n'}.marginalia/\n`, 'keep the annotation store out of git')

  // The agents.
  for (const agent of agents) {
    if (agent === 'claude') jsonConfig(path.join(root, '.mcp.json'), 'mcpServers', { command, args }, 'Claude Code (project MCP servers)')
    if (agent === 'cursor') jsonConfig(path.join(root, '.cursor', 'mcp.json'), 'mcpServers', { command, args }, 'Cursor (project MCP servers)')
    if (agent === 'vscode') jsonConfig(path.join(root, '.vscode', 'mcp.json'), 'servers', { type: 'stdio', command, args }, 'VS Code (workspace MCP servers)')
    if (agent === 'windsurf') jsonConfig(path.join(home, '.codeium', 'windsurf', 'mcp_config.json'), 'mcpServers', { command, args }, 'Windsurf (your MCP servers, all projects)')
    if (agent === 'codex') {
      const file = path.join(home, '.codex', 'config.toml')
      const before = existsSync(file) ? readFileSync(file, 'utf8') : ''
      const block = `[mcp_servers.marginalia]\ncommand = ${JSON.stringify(command)}\nargs = [${args.map((a) => JSON.stringify(a)).join(', ')}]\n`
      if (before.includes(block)) continue
      if (/^\[mcp_servers\.marginalia\]/m.test(before)) {
        notes.push(`${file} already has [mcp_servers.marginalia] with other settings; replace it with:\n${block}`)
        continue
      }
      change(file, `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${before === '' ? '' : '\n'}${block}`, 'Codex (your MCP servers, all projects)')
    }
  }
  return { changes, notes }
}

/** `text` with the Marginalia plugin added, the same text when it is there, or null when there is no plugins array. */
export function addVitePlugin(text: string, commonjs: boolean): string | null {
  if (text.includes('marginalia/vite')) return text
  const plugins = /plugins\s*:\s*\[/.exec(text)
  if (!plugins) return null
  const at = plugins.index + plugins[0].length
  const rest = text.slice(at)
  // One plugin a line (what the starters write): a line of its own at their indent; else first in the list.
  const ownLine = /^[ \t]*\r?\n([ \t]*)(?=\S)/.exec(rest)
  const call = ownLine ? `\n${ownLine[1]}marginalia(),` : /^\s*\]/.test(rest) ? 'marginalia()' : 'marginalia(), '
  const withCall = `${text.slice(0, at)}${call}${rest}`
  const line = commonjs ? "const marginalia = require('marginalia/vite').default\n" : "import marginalia from 'marginalia/vite'\n"
  const imports = [...withCall.matchAll(commonjs ? /^.*require\(.*\).*$/gm : /^import .*$/gm)]
  const last = imports.at(-1)
  if (!last) return line + withCall
  const end = last.index + last[0].length + 1
  return withCall.slice(0, end) + line + withCall.slice(end)
}

/** A line-by-line view of a change: the lines removed (-) and added (+). */
function showChange(c: Change, root: string): string {
  const head = `${c.before === undefined ? 'create' : 'change'} ${rel(root, c.file)} — ${c.what}`
  const before = c.before === undefined ? [] : c.before.split('\n')
  const after = c.after.split('\n')
  const removed = before.filter((l) => !after.includes(l)).map((l) => `  - ${l}`)
  const added = after.filter((l) => !before.includes(l)).map((l) => `  + ${l}`)
  return [head, ...removed, ...added].join('\n')
}

async function run(values: Values): Promise<void> {
  const root = values.dir !== undefined ? path.resolve(String(values.dir)) : projectRoot()
  if (!existsSync(root)) throw new UsageError(`--dir ${root} does not exist`)
  const yes = values.yes === true
  const asked = listOption(values, 'agent')
  for (const a of asked) if (!(AGENTS as readonly string[]).includes(a)) throw new UsageError(`--agent ${a} is not known; use one of ${AGENTS.join(', ')}`)
  const interactive = !yes && process.stdin.isTTY === true
  if (!yes && !interactive) throw new UsageError('init asks questions and stdin is not a terminal: run `marginalia init --yes` (add --home-config for Codex and Windsurf)')
  const rl = interactive ? createInterface({ input: process.stdin, output: process.stderr }) : undefined
  const ask = async (q: string, dflt: boolean): Promise<boolean> => {
    if (!rl) return dflt
    const a = (await rl.question(`${q} ${dflt ? '[Y/n]' : '[y/N]'} `)).trim().toLowerCase()
    return a === '' ? dflt : a.startsWith('y')
  }
  try {
    const d = detect(root)
    out(`project: ${root}\nframework: ${d.framework}${d.viteConfig ? ` (${rel(root, d.viteConfig)})` : ''}   package manager: ${d.packageManager}\nstore: ${path.join(root, '.marginalia', 'store.json')}\n`)
    let agents: Agent[]
    if (asked.length > 0) agents = asked as Agent[]
    else if (rl) {
      agents = []
      for (const a of AGENTS) if (await ask(`Write the MCP config for ${a}${HOME_AGENTS.includes(a) ? ' (in your home directory)' : ''}?`, PROJECT_AGENTS.includes(a))) agents.push(a)
    } else agents = [...PROJECT_AGENTS]
    if (yes && values['home-config'] !== true) {
      const skipped = agents.filter((a) => HOME_AGENTS.includes(a))
      if (skipped.length > 0) out(`skipped ${skipped.join(', ')}: their config is in your home directory; add --home-config to write it\n`)
      agents = agents.filter((a) => !HOME_AGENTS.includes(a))
    }
    const { changes, notes } = plan(root, agents)
    const done: string[] = []
    for (const c of changes) {
      out(showChange(c, root) + '\n')
      if (values['dry-run'] === true) continue
      if (c.before !== undefined && !(await ask('Apply this change?', true))) continue
      mkdirSync(path.dirname(c.file), { recursive: true })
      writeFileSync(c.file, c.after)
      done.push(rel(root, c.file))
    }
    if (values['dry-run'] !== true) mkdirSync(path.join(root, '.marginalia'), { recursive: true })
    for (const n of notes) out(`note: ${n}\n`)
    out(changes.length === 0 ? 'nothing to change: Marginalia is already set up here.\n' : values['dry-run'] === true ? 'dry run: nothing written.\n' : `wrote ${done.join(', ') || 'nothing'}.\n`)
    const run = d.packageManager === 'npm' ? 'npm run dev' : `${d.packageManager} dev`
    out(`next: ${d.framework === 'vite' ? `start your dev server (${run}), open the app and click the Marginalia button` : `run \`npx --no-install marginalia serve\`, add the <script> tag above`}; restart your agent so it loads the MCP config; check everything with \`npx --no-install marginalia doctor\`.\n`)
  } finally {
    rl?.close()
  }
}

function out(text: string): void {
  process.stdout.write(text)
}

function rel(root: string, file: string): string {
  const r = path.relative(root, file)
  return r.startsWith('..') ? file : r
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}
