/**
 * `init --remove`: takes out what `init` writes, and nothing else. Every file init can write (for
 * any agent, the home-directory ones too) is recomputed here; from each that exists, only init's
 * own part is removed — the `marginalia` MCP entry, the hook entries that run `marginalia hook`,
 * the `.marginalia/` line of .gitignore, the skill and plugin files while they are exactly what
 * init writes. The manifest (`.marginalia/init.json`) only says which of those files init created
 * (such a file is deleted once nothing else is left in it); a path it names that is not one of
 * init's files is ignored.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { agentPieces, INIT_AGENTS, jsonEntry, readManifest, type Piece } from './agents.js'

export interface Removal {
  file: string
  before: string
  /** null: delete the file. */
  after: string | null
  what: string
}

export interface RemoveOptions {
  root: string
  home: string
  mcp: { command: string; args: string[] }
  cli: string
}

/** The MCP configs init.ts writes, as pieces (their removal only). */
function mcpPieces(root: string, home: string, mcp: { command: string; args: string[] }): Piece[] {
  return [
    jsonEntry(path.join(root, '.mcp.json'), 'mcpServers', 'marginalia', mcp, 'Claude Code (project MCP servers)'),
    jsonEntry(path.join(root, '.cursor', 'mcp.json'), 'mcpServers', 'marginalia', mcp, 'Cursor (project MCP servers)'),
    jsonEntry(path.join(root, '.vscode', 'mcp.json'), 'servers', 'marginalia', { type: 'stdio', ...mcp }, 'VS Code (workspace MCP servers)'),
    jsonEntry(path.join(home, '.codeium', 'windsurf', 'mcp_config.json'), 'mcpServers', 'marginalia', mcp, 'Windsurf (your MCP servers)'),
    {
      file: path.join(home, '.codex', 'config.toml'),
      what: 'Codex (your MCP servers)',
      merge: () => ({ note: '' }),
      remove: (before) => removeTomlTable(before, 'mcp_servers.marginalia'),
    },
  ]
}

/** `before` without the `[name]` table, when that table runs marginalia; else unchanged. null when nothing is left. */
function removeTomlTable(before: string, name: string): string | null {
  const lines = before.split('\n')
  const start = lines.findIndex((l) => l.trim() === `[${name}]`)
  if (start < 0) return before
  let end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l))
  if (end < 0) end = lines.length
  if (!lines.slice(start, end).some((l) => /marginalia/.test(l) && /^\s*(command|args)\s*=/.test(l))) return before
  let from = start
  while (from > 0 && lines[from - 1]!.trim() === '') from--
  const next = [...lines.slice(0, from), ...lines.slice(end)].join('\n').replace(/\n*$/, '\n')
  return next.trim() === '' ? null : next
}

/** The `.marginalia/` line init adds to .gitignore (removed only when the manifest says init wrote it). */
function gitignorePiece(root: string): Piece {
  return {
    file: path.join(root, '.gitignore'),
    what: 'keep the annotation store out of git',
    merge: () => ({ note: '' }),
    remove: (before) => {
      const kept = before.split('\n').filter((l) => !/^\/?\.marginalia\/?\s*$/.test(l))
      const text = kept.join('\n')
      return text.trim() === '' ? null : text
    },
  }
}

/** What `init --remove` would change: one entry per file that holds something of init's. */
export function planRemoval(o: RemoveOptions): Removal[] {
  const manifest = readManifest(o.root)
  const wrote = new Set([...manifest.created, ...manifest.edited])
  const pieces = [
    ...mcpPieces(o.root, o.home, o.mcp),
    ...agentPieces({ root: o.root, home: o.home, agents: INIT_AGENTS, homeConfig: true, mcp: o.mcp, cli: o.cli }),
    ...(wrote.has(path.join(o.root, '.gitignore')) ? [gitignorePiece(o.root)] : []),
  ]
  const byFile = new Map<string, { before: string; text: string | null; what: string[]; whole: boolean }>()
  for (const piece of pieces) {
    const current = byFile.get(piece.file)
    if (current && current.text === null) continue
    const before = current ? current.text! : existsSync(piece.file) ? readFileSync(piece.file, 'utf8') : undefined
    if (before === undefined) continue
    const after = piece.remove(before)
    if (after === before) continue
    byFile.set(piece.file, { before: current?.before ?? before, text: after, what: [...(current?.what ?? []), piece.what], whole: piece.whole === true })
  }
  const out: Removal[] = []
  for (const [file, r] of byFile) {
    // A file init did not create keeps its place, emptied of init's part.
    const after = r.text === null && !r.whole && !manifest.created.includes(file) ? (file.endsWith('.json') ? '{}\n' : '') : r.text
    if (after === r.before) continue
    out.push({ file, before: r.before, after, what: [...new Set(r.what)].join('; ') })
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1))
}
