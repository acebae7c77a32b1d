/**
 * The ledger of what was told to which agent session: `told.json` beside the store (the file
 * store's folder, `.marginalia/`). Every push path — a hook's answer, the plugin monitor's
 * `marginalia watch`, the Claude channel, a wait that handed annotations over — records here the
 * ids it handed to an agent session, and asks here which ids that session has not been told yet,
 * so one annotation is pushed to one agent session once, whichever path gets there first.
 *
 * An agent session is `AGENT:SESSION` (`claude:3f2a…`, `cursor:conv-1`). `AGENT:*` stands for
 * every session of that agent in this project: a path that does not know the session (the
 * monitor, the channel) records there, and a hook of any session of that agent counts it as told.
 *
 * Bounded: at most MAX_SESSIONS sessions (the least recently told dropped first) and MAX_IDS ids
 * per session (the oldest dropped first). The file is plain JSON any process can rewrite (a
 * cloned repository can even ship one), so it is read as untrusted: a wrong shape is an empty
 * ledger, every id and key is checked, a link in its place is never followed. Writes go to a
 * fresh temporary file renamed over it, so a reader never sees half a file; two processes
 * writing at the same moment can lose one record, which costs at most one repeated push.
 *
 * Synchronous on purpose: a hook runs once per agent turn and must stay cheap (no promises, no
 * imports beyond `node:fs`).
 */
import { closeSync, constants as fsc, openSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import path from 'node:path'
import { readNoFollowSync } from './fs/no-follow.js'

const TOLD_FILE = 'told.json'
export const MAX_SESSIONS = 64
export const MAX_IDS = 500
/** told.json is never read past this size (64 sessions × 500 ids of 128 chars fit well under it). */
const MAX_BYTES = 8 * 1024 * 1024

const O_NOFOLLOW = fsc.O_NOFOLLOW ?? 0

/** `agent:session`: an agent name (lowercase letters, digits, `-`) and a session id, or `*`. */
const AGENT_SESSION = /^([a-z0-9-]{1,32}):([\x21-\x7e]{1,200})$/
/** Annotation ids as the store makes and accepts them (printable, no spaces, ≤ 128). */
const ID = /^[\x21-\x7e]{1,128}$/

interface Entry {
  /** When this session was last told something (epoch ms): the eviction order. */
  at: number
  /** Ids told, oldest first. */
  ids: string[]
}

export interface ToldLedger {
  /** The ledger's file. */
  readonly file: string
  /** Records that `ids` were handed to `agentSession` (`claude:<session>`, or `claude:*` for every session of that agent). */
  markTold(agentSession: string, ids: readonly string[]): void
  /**
   * The ids of `ids`, in their order, that `agentSession` (nor its agent's `*`, unless
   * `agentWide: false`) was not told yet. A session's start reads without `*`: what an earlier
   * session's monitor was told, the new session has not heard.
   */
  untold(agentSession: string, ids: readonly string[], options?: { agentWide?: boolean }): string[]
}

/**
 * The ledger's agent name for an MCP client, from the name it gives in its `clientInfo`: the name
 * the hooks use for the same agent (`claude-code` → `claude`, `codex-mcp-client` → `codex`,
 * `Visual Studio Code` → `vscode` …), so what a wait handed to Claude Code counts as told for
 * Claude Code's hooks, monitor and channel in this project; another client keeps its own name,
 * lowercased to the ledger's alphabet (`mcp` when nothing of it is left).
 */
export function agentOfClient(clientName: string | undefined): string {
  const name = (clientName ?? '').toLowerCase()
  for (const [needle, agent] of CLIENT_AGENTS) if (name.includes(needle)) return agent
  const own = name.replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 32)
  return own === '' ? 'mcp' : own
}

/** Substrings of MCP client names → the agent names hooks are installed under (first match wins). */
const CLIENT_AGENTS: readonly (readonly [string, string])[] = [
  ['claude', 'claude'],
  ['cursor', 'cursor'],
  ['codex', 'codex'],
  ['gemini', 'gemini'],
  ['windsurf', 'windsurf'],
  ['visual studio code', 'vscode'],
  ['vscode', 'vscode'],
  ['copilot', 'vscode'],
]

/** Throws on a key that is not `agent:session`. */
export function checkAgentSession(agentSession: string): { agent: string; session: string } {
  const m = AGENT_SESSION.exec(agentSession)
  if (!m) throw new Error(`"${agentSession.slice(0, 80)}" is not an agent session: write AGENT:SESSION, e.g. claude:3f2a9c (AGENT in a-z, 0-9, -; SESSION printable, no spaces, at most 200 characters; * for every session)`)
  return { agent: m[1]!, session: m[2]! }
}

/** The ledger kept in `dir` (the store's folder). Nothing is created until the first markTold. */
export function openToldLedger(dir: string, now: () => number = Date.now): ToldLedger {
  const file = path.join(dir, TOLD_FILE)
  return {
    file,
    markTold(agentSession, ids) {
      checkAgentSession(agentSession)
      const fresh = ids.filter((id) => typeof id === 'string' && ID.test(id))
      if (fresh.length === 0) return
      const entries = readEntries(file)
      const entry = entries.get(agentSession) ?? { at: 0, ids: [] }
      const known = new Set(entry.ids)
      for (const id of fresh) {
        if (known.has(id)) continue
        known.add(id)
        entry.ids.push(id)
      }
      if (entry.ids.length > MAX_IDS) entry.ids = entry.ids.slice(-MAX_IDS)
      entry.at = Math.max(now(), entry.at)
      entries.delete(agentSession)
      entries.set(agentSession, entry)
      writeEntries(file, entries)
    },
    untold(agentSession, ids, options) {
      const { agent } = checkAgentSession(agentSession)
      if (ids.length === 0) return []
      const entries = readEntries(file)
      const wide = options?.agentWide === false ? [] : (entries.get(`${agent}:*`)?.ids ?? [])
      const told = new Set([...(entries.get(agentSession)?.ids ?? []), ...wide])
      return ids.filter((id) => !told.has(id))
    },
  }
}

/** The entries of told.json, checked; an unreadable or malformed file is an empty ledger. */
function readEntries(file: string): Map<string, Entry> {
  const out = new Map<string, Entry>()
  let text: string
  try {
    text = readSmallFile(file)
  } catch {
    return out // absent, a link, too big, not a file: nothing told (the next write replaces it)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return out
  }
  const sessions = (data as { sessions?: unknown } | null)?.sessions
  if (typeof sessions !== 'object' || sessions === null || Array.isArray(sessions)) return out
  const list: [string, Entry][] = []
  for (const [key, value] of Object.entries(sessions as Record<string, unknown>)) {
    if (!AGENT_SESSION.test(key) || typeof value !== 'object' || value === null) continue
    const { at, ids } = value as { at?: unknown; ids?: unknown }
    if (typeof at !== 'number' || !Number.isFinite(at) || !Array.isArray(ids)) continue
    list.push([key, { at, ids: ids.filter((id): id is string => typeof id === 'string' && ID.test(id)).slice(-MAX_IDS) }])
  }
  list.sort((a, b) => a[1].at - b[1].at || (a[0] < b[0] ? -1 : 1))
  for (const [key, entry] of list.slice(-MAX_SESSIONS)) out.set(key, entry)
  return out
}

function readSmallFile(file: string): string {
  const bytes = readNoFollowSync(file, MAX_BYTES)
  if (bytes === undefined) throw new Error(`${file} does not exist`)
  return bytes.toString('utf8')
}

/** Oldest-told sessions beyond MAX_SESSIONS are dropped; the file is replaced whole. */
function writeEntries(file: string, entries: Map<string, Entry>): void {
  const kept = [...entries].slice(-MAX_SESSIONS)
  const text = JSON.stringify({ format: 'marginalia-told', version: 1, sessions: Object.fromEntries(kept) }) + '\n'
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  const fd = openSync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | O_NOFOLLOW, 0o600)
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
  try {
    renameSync(tmp, file) // replaces a link in its place, never writes through it
  } catch (e) {
    try {
      unlinkSync(tmp)
    } catch {
      // already gone
    }
    throw e
  }
}
