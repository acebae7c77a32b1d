/**
 * What `init` installs for each agent besides its MCP config: the hooks that tell it of new
 * annotations at every turn (`marginalia hook AGENT EVENT`), the skill, and — personal, with
 * `--home-config` — the Claude Code plugin whose monitor pushes each new annotation into the
 * session. Also how `init --remove` takes exactly these out again, and the manifest of what was
 * written (`.marginalia/init.json`), read back as untrusted input.
 *
 * Where each goes (team: a file the project commits; personal: your home directory):
 *
 * | agent    | hooks (team)                                   | skill (team)                 |
 * |----------|------------------------------------------------|------------------------------|
 * | claude   | .claude/settings.json Stop, UserPromptSubmit, SessionStart | .claude/skills/marginalia |
 * | cursor   | .cursor/hooks.json stop, sessionStart          | .agents/skills/marginalia    |
 * | codex    | .codex/hooks.json Stop, UserPromptSubmit, SessionStart | .agents/skills/marginalia |
 * | gemini   | .gemini/settings.json AfterAgent, BeforeAgent, SessionStart (+ its mcpServers) | .agents/skills/marginalia |
 * | vscode   | (runs the Claude Code hooks of .claude/settings.json) | .github/skills/marginalia |
 * | windsurf | —                                              | —                            |
 *
 * The hook commands run the project's own install (`node_modules/.bin/marginalia`, never npx: a
 * hook runs at every turn), from the project directory the agent names (`$CLAUDE_PROJECT_DIR`,
 * `$GEMINI_PROJECT_DIR`) or the project root the agent runs hooks in (Cursor, Codex).
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { skillMarkdown, SKILL_NAME } from './skill.js'
import { VERSION } from '../../version.js'

export const INIT_AGENTS = ['claude', 'cursor', 'vscode', 'windsurf', 'codex', 'gemini'] as const
type InitAgent = (typeof INIT_AGENTS)[number]

/** One file init writes or merges into. */
export interface Piece {
  file: string
  what: string
  /** The file's text with this piece in (undefined: the file cannot be read as what it should be; the note says what to add). */
  merge(before: string | undefined): { text: string } | { note: string }
  /** The file's text without this piece (null: nothing of it left, the file can go if init created it). */
  remove(before: string): string | null
  /** The whole file is init's (a skill, a plugin file): it goes when it is exactly what init writes. */
  whole?: true
}

interface HookEvents {
  file: string
  /** The hook settings' shape: Claude Code's (Claude Code, Codex, Gemini CLI) or Cursor's. */
  shape: 'claude' | 'cursor'
  events: readonly string[]
  command: (event: string) => string
  /** The timeout field of one hook, in the agent's unit. */
  timeout: Record<string, number>
  what: string
}

const BIN = 'node_modules/.bin/marginalia'

/** Matches a command init wrote: the project's marginalia, then `hook AGENT EVENT`. */
const OUR_HOOK = /marginalia["']?\s+hook\s+(claude|cursor|codex|gemini)\s+[A-Za-z]+\s*$/

function hooksOf(agent: InitAgent, root: string): HookEvents | undefined {
  switch (agent) {
    case 'claude':
      return { file: path.join(root, '.claude', 'settings.json'), shape: 'claude', events: ['Stop', 'SubagentStop', 'UserPromptSubmit', 'SessionStart'], command: (e) => `"$CLAUDE_PROJECT_DIR"/${BIN} hook claude ${e}`, timeout: { timeout: 10 }, what: 'Claude Code hooks (team: committed with the project)' }
    case 'cursor':
      return { file: path.join(root, '.cursor', 'hooks.json'), shape: 'cursor', events: ['stop', 'sessionStart'], command: (e) => `./${BIN} hook cursor ${e}`, timeout: {}, what: 'Cursor hooks (team: committed with the project)' }
    case 'codex':
      return { file: path.join(root, '.codex', 'hooks.json'), shape: 'claude', events: ['Stop', 'UserPromptSubmit', 'SessionStart'], command: (e) => `./${BIN} hook codex ${e}`, timeout: { timeout: 10 }, what: 'Codex hooks (team: committed with the project)' }
    case 'gemini':
      return { file: path.join(root, '.gemini', 'settings.json'), shape: 'claude', events: ['AfterAgent', 'BeforeAgent', 'SessionStart'], command: (e) => `"$GEMINI_PROJECT_DIR"/${BIN} hook gemini ${e}`, timeout: { timeout: 10_000 }, what: 'Gemini CLI hooks (team: committed with the project)' }
    default:
      return undefined
  }
}

function skillDirOf(agent: InitAgent, root: string): string | undefined {
  if (agent === 'claude') return path.join(root, '.claude', 'skills', SKILL_NAME)
  if (agent === 'cursor' || agent === 'codex' || agent === 'gemini') return path.join(root, '.agents', 'skills', SKILL_NAME)
  if (agent === 'vscode') return path.join(root, '.github', 'skills', SKILL_NAME)
  return undefined
}

/** The personal Claude Code plugin's folder: a skills-directory plugin, loaded with no install step. */
function pluginDir(home: string): string {
  return path.join(home, '.claude', 'skills', SKILL_NAME)
}

type Json = Record<string, unknown>

function parseObject(text: string | undefined): Json | undefined {
  if (text === undefined || text.trim() === '') return {}
  try {
    const data: unknown = JSON.parse(text)
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Json) : undefined
  } catch {
    return undefined
  }
}

const isEmptyObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0
const pretty = (data: Json): string => JSON.stringify(data, null, 2) + '\n'

/** `data[key][name] = value` in a JSON file (an MCP server entry). */
export function jsonEntry(file: string, key: string, name: string, value: unknown, what: string): Piece {
  return {
    file,
    what,
    merge(before) {
      const data = parseObject(before)
      if (!data) return { note: `${file} is not plain JSON (comments?); add this under "${key}" yourself: "${name}": ${JSON.stringify(value)}` }
      const group = typeof data[key] === 'object' && data[key] !== null && !Array.isArray(data[key]) ? (data[key] as Json) : {}
      return { text: pretty({ ...data, [key]: { ...group, [name]: value } }) }
    },
    remove(before) {
      const data = parseObject(before)
      if (!data) return before
      const group = data[key]
      if (typeof group !== 'object' || group === null || Array.isArray(group) || !Object.hasOwn(group, name)) return before
      const { [name]: _gone, ...rest } = group as Json
      const next: Json = { ...data, [key]: rest }
      if (Object.keys(rest).length === 0) delete next[key]
      return Object.keys(next).length === 0 ? null : pretty(next)
    },
  }
}

function isOurHookCommand(command: unknown): boolean {
  return typeof command === 'string' && OUR_HOOK.test(command)
}

/** One agent's hook entries in its settings file; any hook that is not ours is kept as it is. */
function hookPiece(h: HookEvents): Piece {
  const strip = (list: unknown): unknown[] => {
    if (!Array.isArray(list)) return []
    if (h.shape === 'cursor') return list.filter((e) => !isOurHookCommand((e as Json | null)?.command))
    return list.flatMap((group) => {
      const hooks = (group as Json | null)?.hooks
      if (!Array.isArray(hooks)) return [group]
      const kept = hooks.filter((x) => !isOurHookCommand((x as Json | null)?.command))
      return kept.length === 0 ? [] : [kept.length === hooks.length ? group : { ...(group as Json), hooks: kept }]
    })
  }
  const entry = (event: string): Json => {
    const command = h.command(event)
    if (h.shape === 'cursor') return { command, ...(event === 'stop' ? { loop_limit: 5 } : {}) }
    return { ...(h.file.includes(`${path.sep}.gemini${path.sep}`) ? { matcher: '' } : {}), hooks: [{ type: 'command', command, ...h.timeout }] }
  }
  return {
    file: h.file,
    what: h.what,
    merge(before) {
      const data = parseObject(before)
      if (!data) return { note: `${h.file} is not plain JSON (comments?); add these hooks yourself: ${h.events.map((e) => `${e}: ${h.command(e)}`).join('; ')}` }
      const hooks = typeof data.hooks === 'object' && data.hooks !== null && !Array.isArray(data.hooks) ? { ...(data.hooks as Json) } : {}
      for (const event of h.events) hooks[event] = [...strip(hooks[event]), entry(event)]
      return { text: pretty({ ...(h.shape === 'cursor' ? { version: 1 } : {}), ...data, hooks }) }
    },
    remove(before) {
      const data = parseObject(before)
      if (!data || typeof data.hooks !== 'object' || data.hooks === null) return before
      const hooks: Json = {}
      for (const [event, list] of Object.entries(data.hooks as Json)) {
        const kept = strip(list)
        if (kept.length > 0 || !Array.isArray(list)) hooks[event] = Array.isArray(list) ? kept : list
      }
      const next: Json = { ...data, hooks }
      if (isEmptyObject(hooks)) delete next.hooks
      if (h.shape === 'cursor' && Object.keys(next).every((k) => k === 'version')) return null
      return Object.keys(next).length === 0 ? null : pretty(next)
    },
  }
}

/** A whole file of init's own (the skill, the plugin's files): removed only while it is exactly what init writes. */
function wholeFile(file: string, text: string, what: string): Piece {
  return {
    file,
    what,
    merge: () => ({ text }),
    remove: (before) => (before === text ? null : before),
    whole: true,
  }
}

export interface AgentPlanOptions {
  root: string
  home: string
  agents: readonly InitAgent[]
  /** Files in the home directory too (the Claude Code plugin). */
  homeConfig: boolean
  /** The agent's MCP command, as init writes it in every config. */
  mcp: { command: string; args: string[] }
  /** The marginalia CLI's own file (for the personal plugin, which serves every project). */
  cli: string
}

/** Every piece init installs for these agents besides the MCP configs init.ts writes (Gemini's MCP entry included: its settings file is new). */
export function agentPieces(o: AgentPlanOptions): Piece[] {
  const pieces: Piece[] = []
  const skills = new Set<string>()
  for (const agent of o.agents) {
    if (agent === 'gemini') pieces.push(jsonEntry(path.join(o.root, '.gemini', 'settings.json'), 'mcpServers', 'marginalia', o.mcp, 'Gemini CLI (project MCP servers)'))
    const hooks = hooksOf(agent, o.root)
    if (hooks) pieces.push(hookPiece(hooks))
    const skill = skillDirOf(agent, o.root)
    if (skill && !skills.has(skill)) {
      skills.add(skill)
      pieces.push(wholeFile(path.join(skill, 'SKILL.md'), skillMarkdown(), `the Marginalia skill (${path.relative(o.root, skill)})`))
    }
  }
  if (o.homeConfig && o.agents.includes('claude')) pieces.push(...pluginPieces(o.home, o.cli))
  return pieces
}

/**
 * The personal Claude Code plugin in `~/.claude/skills/marginalia/`: its manifest, the monitor
 * (`marginalia watch --as claude --if-present`: each new annotation of the session's project, once;
 * silent where the project has no store), the MCP server (the project's store, found from the
 * session's working directory) and the skill. Personal because a project's skills-directory plugin
 * does not load monitors.
 */
function pluginPieces(home: string, cli: string): Piece[] {
  const dir = pluginDir(home)
  const node = JSON.stringify(process.execPath)
  const bin = JSON.stringify(cli)
  const what = 'the Claude Code plugin (personal: every project; its monitor pushes new annotations)'
  return [
    wholeFile(path.join(dir, '.claude-plugin', 'plugin.json'), pretty({ name: SKILL_NAME, version: VERSION, description: 'Annotations a person leaves on the running app, pushed into the session as they land (Marginalia)', author: { name: 'Marginalia contributors' } }), what),
    wholeFile(path.join(dir, 'monitors', 'monitors.json'), JSON.stringify([{ name: 'marginalia-inbox', command: `${node} ${bin} watch --as claude --if-present`, description: "New annotations from the person in the browser (Marginalia): one JSON line each, with a prompt to act on" }], null, 2) + '\n', what),
    wholeFile(path.join(dir, '.mcp.json'), pretty({ mcpServers: { marginalia: { command: process.execPath, args: [cli, 'mcp'] } } }), what),
    wholeFile(path.join(dir, 'SKILL.md'), skillMarkdown(), what),
  ]
}

/** One hook of init's found in an agent's settings file, with the command as written there. */
export interface InstalledHook {
  agent: 'claude' | 'cursor' | 'codex' | 'gemini'
  file: string
  event: string
  command: string
}

/** The hooks of init's in the project's settings files (read as untrusted input: a file that is not plain JSON has none), by agent and event. */
export function installedHooks(root: string): InstalledHook[] {
  const found: InstalledHook[] = []
  for (const agent of ['claude', 'cursor', 'codex', 'gemini'] as const) {
    const h = hooksOf(agent, root)!
    if (!existsSync(h.file)) continue
    let data: Json | undefined
    try {
      data = parseObject(readFileSync(h.file, 'utf8'))
    } catch {
      continue
    }
    const hooks = data?.hooks
    if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) continue
    for (const event of h.events) {
      const list = (hooks as Json)[event]
      if (!Array.isArray(list)) continue
      const commands = h.shape === 'cursor' ? list.map((e) => (e as Json | null)?.command) : list.flatMap((g) => ((g as Json | null)?.hooks instanceof Array ? ((g as Json).hooks as unknown[]) : []).map((x) => (x as Json | null)?.command))
      const command = commands.find((c): c is string => isOurHookCommand(c) && (c as string).includes(` hook ${agent} ${event}`))
      if (command !== undefined) found.push({ agent, file: h.file, event, command })
    }
  }
  return found
}

/** The personal Claude Code plugin's monitor command, when init installed it in `home`. */
export function pluginMonitor(home: string): string | undefined {
  try {
    const list: unknown = JSON.parse(readFileSync(path.join(pluginDir(home), 'monitors', 'monitors.json'), 'utf8'))
    const monitor = Array.isArray(list) ? (list as (Json | null)[]).find((m) => m?.name === 'marginalia-inbox') : undefined
    return typeof monitor?.command === 'string' ? monitor.command : undefined
  } catch {
    return undefined
  }
}

/** What `init` wrote, kept so `init --remove` knows which files it created (the rest it only edited). */
export interface Manifest {
  created: string[]
  edited: string[]
}

export const MANIFEST_FILE = 'init.json'

/** The manifest in `.marginalia/`, read as untrusted: only strings, only absolute paths, nothing else kept. */
export function readManifest(root: string): Manifest {
  const empty: Manifest = { created: [], edited: [] }
  const file = path.join(root, '.marginalia', MANIFEST_FILE)
  if (!existsSync(file)) return empty
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<keyof Manifest, unknown>>
    const paths = (v: unknown): string[] => (Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p) && p.length < 4096).map((p) => path.normalize(p)) : [])
    return { created: paths(data.created), edited: paths(data.edited) }
  } catch {
    return empty
  }
}

export function manifestText(m: Manifest): string {
  const sorted = (l: string[]): string[] => [...new Set(l)].sort()
  return pretty({ format: 'marginalia-init', version: 1, note: 'What marginalia init wrote; marginalia init --remove reads it.', created: sorted(m.created), edited: sorted(m.edited.filter((f) => !m.created.includes(f))) })
}
