/**
 * `marginalia init`: set Marginalia up in the user's project. Detects the framework and package
 * manager, sets it up dev only (src/cli/frameworks: the Vite plugin in vite.config.*, Angular's
 * development index.html with the head snippet, or the head snippet printed), writes MCP configs for
 * the agents picked — each pinned to this project's store so agent and browser share one — adds
 * `.marginalia/` to .gitignore, and says what it did. Every change to an existing file is shown
 * before it is written; running it again changes nothing.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline/promises'
import { listOption } from './args.js'
import { UsageError, type Command, type Values } from './command.js'
import { detectFramework, readProject } from './frameworks/index.js'
import { projectRoot } from './project.js'
import { CONNECT_AGENT } from '../http/connect.js'
import { AGENTS, DEFAULT_AGENTS, FIRST_RUN, HOME_AGENTS, PROJECT_FILES, homeEntry, projectEntry, type Agent } from './agent-configs.js'
import { readJsonc, sameJson, setJsonc } from './jsonc.js'
import { agentPieces } from './init/agents.js'
import { applyRemoval, planPieces, recordManifest } from './init/apply.js'
import { planRemoval } from './init/remove.js'

export const init: Command = {
  oneShot: true,
  summary: 'Set Marginalia up in this project: the framework (dev only), agent MCP configs, .gitignore',
  usage: [
    'marginalia init [--yes] [--agent NAME ...] [--home-config] [--dir DIR] [--dry-run] [--remove]',
    '',
    'Run in your app. Detects the framework and package manager and sets it up, dev only: the Vite',
    'plugin line in vite.config.*; for Angular, an index.html with the head snippet for ng serve\'s',
    'development configuration; for anything else (Rails, Django, Laravel, plain HTML) it prints the',
    'head snippet to paste. Writes the MCP config of each agent you pick (`marginalia mcp` over stdio,',
    'on this project\'s store and root; project files hold no absolute path, so they work in a clone),',
    'its hooks (`marginalia hook`: new annotations at every turn) and the Marginalia skill; with',
    '--home-config and claude, the personal Claude Code plugin whose monitor pushes each new annotation',
    'into the session. Edits JSON with comments in place; says what each agent asks the first time;',
    'adds .marginalia/ to .gitignore. A change to an existing file is shown before it is written;',
    'running init again changes nothing. What it wrote is listed in .marginalia/init.json; --remove',
    'takes it out again.',
    '',
    'Options:',
    '  -y, --yes            do not ask: project configs for Claude Code, Cursor and VS Code (add gemini with --agent)',
    `      --agent NAME     only these agents (repeatable): ${AGENTS.join(', ')}`,
    '      --home-config    with --yes: also write files in your home directory (Codex, Windsurf, the Claude Code plugin)',
    '      --dir DIR        the project (default: found from here: nearest .marginalia/, package.json or .git)',
    '      --dry-run        show what would change, write nothing',
    '      --remove         take out what init wrote (MCP entries, hooks, skill, plugin, the .gitignore line); the framework set-up stays',
  ].join('\n'),
  options: {
    yes: { type: 'boolean', short: 'y' },
    agent: { type: 'string', multiple: true },
    'home-config': { type: 'boolean' },
    dir: { type: 'string' },
    'dry-run': { type: 'boolean' },
    remove: { type: 'boolean' },
  },
  run,
}

/** One planned change: a file and its new text (undefined old text: a new file). */
interface Change {
  file: string
  before: string | undefined
  after: string
  what: string
}

/** The changes `init` would make in `root` for `agents` (files whose text would not change are left out). */
function plan(root: string, agents: readonly Agent[], homeConfig: boolean, pieceAgents: readonly Agent[] = agents, home: string = os.homedir()): { changes: Change[]; notes: string[] } {
  const homeServer = homeEntry(root)
  const changes: Change[] = []
  const notes: string[] = []
  const change = (file: string, after: string, what: string): void => {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    if (before !== after) changes.push({ file, before, after, what })
  }
  const jsonConfig = (file: string, key: 'mcpServers' | 'servers', entry: object, what: string): void => {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    // JSON with comments (VS Code's, `ng new`'s): edited in place, its comments and formatting kept.
    const read = before === undefined || before.trim() === '' ? { value: {} } : readJsonc(before)
    if ('error' in read || typeof read.value !== 'object' || read.value === null || Array.isArray(read.value)) {
      notes.push(`${rel(root, file)} cannot be read (${'error' in read ? read.error : 'not an object'}): fix it, or add this under "${key}" yourself: "marginalia": ${JSON.stringify(entry)}`)
      return
    }
    const servers = (read.value as Record<string, unknown>)[key]
    if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers))) {
      notes.push(`${rel(root, file)}: "${key}" is not an object; add this under it yourself: "marginalia": ${JSON.stringify(entry)}`)
      return
    }
    if (sameJson((servers as Record<string, unknown> | undefined)?.marginalia, entry)) return
    const next = before === undefined || before.trim() === '' ? `${JSON.stringify({ [key]: { marginalia: entry } }, null, 2)}\n` : setJsonc(before, [key, 'marginalia'], entry)
    change(file, next, what)
  }

  // The app side: the framework's own set-up, dev only.
  const project = readProject(root)
  const framework = detectFramework(project)
  const unsupported = framework.unsupported?.(project)
  if (unsupported !== undefined) throw new UsageError(unsupported)
  framework.setUp(project, { change, note: (text) => notes.push(text) })

  // The store directory, so every command started anywhere in the project finds it.
  const gitignore = path.join(root, '.gitignore')
  const ignored = existsSync(gitignore) ? readFileSync(gitignore, 'utf8') : ''
  if (!/^\/?\.marginalia\/?\s*$/m.test(ignored)) change(gitignore, `${ignored}${ignored === '' || ignored.endsWith('\n') ? '' : '\n'}.marginalia/\n`, 'keep the annotation store out of git')

  // The agents.
  for (const agent of agents) {
    const project = agent === 'gemini' ? undefined : PROJECT_FILES[agent]
    if (project) jsonConfig(path.join(root, project.file), project.key, projectEntry(agent), project.what)
    if (agent === 'windsurf') jsonConfig(path.join(home, '.codeium', 'windsurf', 'mcp_config.json'), 'mcpServers', homeServer, 'Windsurf (your MCP servers, all projects)')
    if (agent === 'codex') {
      const file = path.join(home, '.codex', 'config.toml')
      const before = existsSync(file) ? readFileSync(file, 'utf8') : ''
      const block = `[mcp_servers.marginalia]\ncommand = ${JSON.stringify(homeServer.command)}\nargs = [${homeServer.args.map((a) => JSON.stringify(a)).join(', ')}]\n`
      if (before.includes(block)) continue
      if (/^\[mcp_servers\.marginalia\]/m.test(before)) {
        notes.push(`${file} already has [mcp_servers.marginalia] with other settings; replace it with:\n${block}`)
        continue
      }
      change(file, `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${before === '' ? '' : '\n'}${block}`, 'Codex (your MCP servers, all projects)')
    }
  }
  // Hooks, skill, Gemini's settings, the personal Claude Code plugin (init/agents.ts).
  const extra = planPieces(agentPieces({ root, home, agents: pieceAgents, homeConfig, mcp: projectEntry('gemini'), cli: cliFile() }))
  changes.push(...extra.changes)
  notes.push(...extra.notes)
  return { changes, notes }
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

/** This CLI's own file (the personal plugin runs it for every project). */
function cliFile(): string {
  const argv1 = process.argv[1]
  return argv1 !== undefined && existsSync(argv1) ? realpathSync(argv1) : 'marginalia'
}

async function run(values: Values): Promise<void> {
  const root = values.dir !== undefined ? path.resolve(String(values.dir)) : projectRoot()
  if (!existsSync(root)) throw new UsageError(`--dir ${root} does not exist`)
  if (values.remove === true) {
    const removals = planRemoval({ root, home: os.homedir(), mcp: projectEntry('gemini'), cli: cliFile() })
    out(applyRemoval(root, removals, values['dry-run'] === true))
    return
  }
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
    const project = readProject(root)
    const framework = detectFramework(project)
    out(`project: ${root}\nframework: ${framework.name} (${framework.id})   package manager: ${project.packageManager}\nstore: ${path.join(root, '.marginalia', 'store.json')}\n`)
    let agents: Agent[]
    if (asked.length > 0) agents = asked as Agent[]
    else if (rl) {
      agents = []
      for (const a of AGENTS) if (await ask(`Write the MCP config for ${a}${HOME_AGENTS.includes(a) ? ' (in your home directory)' : ''}?`, DEFAULT_AGENTS.includes(a))) agents.push(a)
    } else agents = [...DEFAULT_AGENTS]
    // Hooks and skills live in the project for every agent, Codex's too; only MCP configs may be in the home directory.
    const pieceAgents = [...agents]
    if (yes && values['home-config'] !== true) {
      const skipped = agents.filter((a) => HOME_AGENTS.includes(a))
      if (skipped.length > 0) out(`skipped the MCP config of ${skipped.join(', ')}: it is in your home directory; add --home-config to write it\n`)
      agents = agents.filter((a) => !HOME_AGENTS.includes(a))
    }
    const homeConfig = values['home-config'] === true || (!yes && agents.some((a) => HOME_AGENTS.includes(a)))
    const { changes, notes } = plan(root, agents, homeConfig, pieceAgents)
    const done: string[] = []
    for (const c of changes) {
      out(showChange(c, root) + '\n')
      if (values['dry-run'] === true) continue
      if (c.before !== undefined && !(await ask('Apply this change?', true))) continue
      mkdirSync(path.dirname(c.file), { recursive: true })
      writeFileSync(c.file, c.after)
      done.push(rel(root, c.file))
    }
    if (values['dry-run'] !== true) {
      mkdirSync(path.join(root, '.marginalia'), { recursive: true })
      recordManifest(root, changes.filter((c) => done.includes(rel(root, c.file))))
    }
    for (const n of notes) out(`note: ${n}\n`)
    out(changes.length === 0 ? 'nothing to change: Marginalia is already set up here.\n' : values['dry-run'] === true ? 'dry run: nothing written.\n' : `wrote ${done.join(', ') || 'nothing'}.\n`)
    const run = framework.devCommand ?? (project.packageManager === 'npm' ? `npm run ${framework.devScript}` : `${project.packageManager} ${framework.devScript}`)
    out(`agents: ${agents.length > 0 ? `${agents.join(', ')} connect over stdio (\`marginalia mcp\`, this project's store and root): restart them so they load the config` : `none configured; ${CONNECT_AGENT.charAt(0).toLowerCase()}${CONNECT_AGENT.slice(1)}`}.\n`)
    for (const a of agents) out(`  ${FIRST_RUN[a]}\n`)
    out(`next: ${nextStep(framework, run)}; check everything with \`npx --no-install marginalia doctor\`.\n`)
  } finally {
    rl?.close()
  }
}

/** What to do after init: start the dev server (the one command), open the app, click Annotate. */
function nextStep(framework: { startsServer: boolean; devCommand?: string }, run: string): string {
  const annotate = 'open the app and click Annotate (or press Alt+Shift+A), point at something, write, and click Send'
  return framework.startsServer ? `start your dev server (${run}): it starts the Marginalia server; ${annotate}` : `run \`npx --no-install marginalia serve\` beside your dev server (${run}), ${annotate}`
}

function out(text: string): void {
  process.stdout.write(text)
}

function rel(root: string, file: string): string {
  const r = path.relative(root, file)
  return r.startsWith('..') ? file : r
}
