/**
 * The MCP server entry `init` writes for each agent, and what each agent asks the first time.
 *
 * Project files (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, `.gemini/settings.json`)
 * are committed and cloned: they hold no absolute path. The command is the project's own install
 * (`npx --no-install marginalia mcp`, never a download); the project is the agent's own variable
 * where it has one (`${workspaceFolder}` in VS Code and Cursor), else found at run time from the
 * directory the agent starts it in (the nearest `.marginalia/`, package.json or .git — see
 * project.ts), and the store is that project's `.marginalia/store.json`. Configs in the home
 * directory (Windsurf, Codex) serve every project, so they name this one by its path.
 */
import path from 'node:path'

/** Agents whose config `init` can write. Project files first; `codex` and `windsurf` live in your home directory. */
export const AGENTS = ['claude', 'cursor', 'vscode', 'gemini', 'windsurf', 'codex'] as const
export type Agent = (typeof AGENTS)[number]
export const HOME_AGENTS: readonly Agent[] = ['windsurf', 'codex']
/** What `--yes` writes without `--agent`: the project configs of the editors most people use. */
export const DEFAULT_AGENTS: readonly Agent[] = ['claude', 'cursor', 'vscode']

const COMMAND = 'npx'
const BASE_ARGS = ['--no-install', 'marginalia', 'mcp']

/** A stdio server entry. */
export interface StdioEntry {
  type?: 'stdio'
  command: string
  args: string[]
}

/** The entry for a project file: no absolute path (see the module comment). */
export function projectEntry(agent: Agent): StdioEntry {
  if (agent === 'vscode') return { type: 'stdio', command: COMMAND, args: [...BASE_ARGS, '--root', '${workspaceFolder}'] }
  if (agent === 'cursor') return { command: COMMAND, args: [...BASE_ARGS, '--root', '${workspaceFolder}'] }
  return { command: COMMAND, args: [...BASE_ARGS] }
}

/** The entry for a config in the home directory: this project's store and root by path. */
export function homeEntry(root: string): StdioEntry {
  return { command: COMMAND, args: [...BASE_ARGS, '--store', path.join(root, '.marginalia', 'store.json'), '--root', root] }
}

/** Each agent's file, its servers' key, and what it is called in init's output. */
export const PROJECT_FILES: Partial<Record<Agent, { file: string; key: 'mcpServers' | 'servers'; what: string }>> = {
  claude: { file: '.mcp.json', key: 'mcpServers', what: 'Claude Code (project MCP servers)' },
  cursor: { file: '.cursor/mcp.json', key: 'mcpServers', what: 'Cursor (project MCP servers)' },
  vscode: { file: '.vscode/mcp.json', key: 'servers', what: 'VS Code (workspace MCP servers)' },
  gemini: { file: '.gemini/settings.json', key: 'mcpServers', what: 'Gemini CLI (project settings)' },
}

/** What each agent asks before it starts the server, with the names on its screen. */
export const FIRST_RUN: Record<Agent, string> = {
  claude: 'Claude Code: `claude mcp list` shows marginalia as "Pending approval (run `claude` to approve)" until you start `claude` in this project and approve it in the prompt about the new MCP server in .mcp.json',
  cursor: 'Cursor: Settings → MCP lists marginalia under the project\'s servers; switch it on if Cursor asks',
  vscode: 'VS Code: in .vscode/mcp.json click "Start" above marginalia (or run "MCP: List Servers"); the first start asks you to trust the server: click "Trust"',
  gemini: 'Gemini CLI: it ignores the project\'s .gemini/settings.json until the folder is trusted: start `gemini` here and choose "Trust folder"',
  windsurf: 'Windsurf: open Settings → Cascade → MCP servers and press "Refresh"',
  codex: 'Codex: starts the server with its next session (`codex mcp list` shows it)',
}
