/**
 * Agent presence, as the server sees it: agents over HTTP (counted per agent, its identity with
 * sign-in or the client it names, not per MCP session: a 2026-07-28 client has no session), how
 * many calls are waiting for the person right now (inside a tool tagged `listening`:
 * watch_annotations, watch_changes, ask, await_reply), and stdio agents (`marginalia mcp`) in other
 * processes, which leave a presence file beside the store. The overlay shows it ("agent listening").
 *
 * Honest: an HTTP agent counts as connected only while it has an open request or stream, or made
 * a request in the last RECENT_MS; an agent that ended all its sessions (DELETE) stops counting at
 * once, one that left without a word stops counting RECENT_MS after its last request.
 */
import { closeSync, constants as fsc, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import path from 'node:path'
import { ensureDirectorySync, openNoFollowSync } from '../store/fs/no-follow.js'
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs'
import type { CallOutcome, ToolRegistry, ToolService } from '../tools/registry.js'
import { waitTaskOf } from '../tools/define.js'

/** An HTTP agent with nothing open counts as connected this long after its last request. */
export const PRESENCE_RECENT_MS = 60_000
/** How often the presence files of stdio agents are looked at. */
const STDIO_POLL_MS = 5_000

export interface Presence {
  /** An agent is connected now: an MCP session with an open stream or a recent request, or a running stdio agent. */
  connected: boolean
  /** Open MCP sessions over HTTP, 2025 revisions (including idle ones not counted as connected). */
  sessions: number
  /** Agents over HTTP counted as connected now (each identity or client once, however many sessions or requests). */
  agents: number
  /** Calls currently waiting for the person (inside a listening tool). */
  watching: number
  /** `marginalia mcp` processes (stdio agents) running on this store. */
  stdio?: number
  /** When an MCP request or tool call was last seen (ISO-8601 UTC). */
  lastSeenAt?: string
}

export interface PresenceOptions {
  /** The store's directory: stdio agents' presence files are read from `<dir>/presence/`. */
  storeDir?: string
}

/** One agent over HTTP: its sessions (2025), its requests and streams open now, when it was last heard. */
interface AgentState {
  sessions: number
  open: number
  lastSeenMs: number
  /** It spoke without a session (2026-07-28): only recency and open requests say it is there. */
  stateless: boolean
}

/** The agent key of callers that name nothing (no sign-in, no client name). */
const ANONYMOUS = ''

export class PresenceTracker {
  private sessions = 0
  private watching = 0
  private readonly agentStates = new Map<string, AgentState>()
  private stdio = 0
  /** Listening calls of stdio agents, from their presence files. */
  private stdioWatching = 0
  /** Waits of task clients between their polls (each counts as a call waiting). */
  readonly taskPolls = new PollLeases(() => this.emit())
  private lastSeenMs: number | undefined
  private staleTimer: ReturnType<typeof setTimeout> | undefined
  private pollTimer: ReturnType<typeof setInterval> | undefined
  private readonly subject: BehaviorSubject<Presence>
  /** The current presence, then every change of `connected`, `sessions`, `watching` or `stdio` (lastSeenAt alone does not emit). */
  readonly presence$: Observable<Presence>

  constructor(
    private readonly clock: () => Date = () => new Date(),
    private readonly options: PresenceOptions = {},
  ) {
    this.subject = new BehaviorSubject(this.current())
    this.presence$ = this.subject.pipe(distinctUntilChanged((a, b) => a.connected === b.connected && a.sessions === b.sessions && a.agents === b.agents && a.watching === b.watching && a.stdio === b.stdio))
    if (options.storeDir !== undefined) {
      ;({ agents: this.stdio, watching: this.stdioWatching } = readStdioAgents(options.storeDir))
      this.pollTimer = setInterval(() => {
        const { agents, watching } = readStdioAgents(options.storeDir!)
        if (agents !== this.stdio || watching !== this.stdioWatching) {
          this.stdio = agents
          this.stdioWatching = watching
          this.emit()
        }
      }, STDIO_POLL_MS)
      this.pollTimer.unref?.()
    }
  }

  current(): Presence {
    const now = this.clock().getTime()
    let agents = 0
    for (const [key, a] of this.agentStates) {
      const recent = now - a.lastSeenMs < PRESENCE_RECENT_MS
      if (a.open > 0 || (recent && (a.sessions > 0 || a.stateless))) agents++
      else if (a.sessions === 0 && !recent) this.agentStates.delete(key) // gone: forget it
    }
    const p: Presence = { connected: agents > 0 || this.stdio > 0, sessions: this.sessions, agents, watching: this.watching + this.taskPolls.size + this.stdioWatching }
    if (this.options.storeDir !== undefined) p.stdio = this.stdio
    if (this.lastSeenMs !== undefined) p.lastSeenAt = new Date(this.lastSeenMs).toISOString()
    return p
  }

  seen(): void {
    this.lastSeenMs = this.clock().getTime()
    // When nothing more happens, "connected" goes stale RECENT_MS from now: say so then.
    if (this.staleTimer) clearTimeout(this.staleTimer)
    this.staleTimer = setTimeout(() => this.emit(), PRESENCE_RECENT_MS + 10)
    this.staleTimer.unref?.()
    if (!this.subject.value.connected) this.emit()
  }

  private agent(key: string): AgentState {
    let a = this.agentStates.get(key)
    if (!a) this.agentStates.set(key, (a = { sessions: 0, open: 0, lastSeenMs: this.clock().getTime(), stateless: false }))
    return a
  }

  /** A 2025 MCP session of `agent` began (initialize). */
  sessionOpened(agent: string = ANONYMOUS): void {
    this.sessions++
    this.agent(agent).sessions++
    this.agentSeen(agent)
    this.emit()
  }

  /** A session of `agent` ended: with its last one, the agent no longer counts (unless a request is open). */
  sessionClosed(agent: string = ANONYMOUS): void {
    this.sessions = Math.max(0, this.sessions - 1)
    const a = this.agentStates.get(agent)
    if (a) a.sessions = Math.max(0, a.sessions - 1)
    this.emit()
  }

  /**
   * A request or stream of `agent` opened (it counts as connected while open). `stateless`: it came
   * without a session (2026-07-28), so the agent counts for RECENT_MS after it too.
   */
  streamOpened(agent: string = ANONYMOUS, stateless = false): void {
    const a = this.agent(agent)
    a.open++
    if (stateless) a.stateless = true
    this.agentSeen(agent)
    this.emit()
  }

  streamClosed(agent: string = ANONYMOUS): void {
    const a = this.agentStates.get(agent)
    if (a) a.open = Math.max(0, a.open - 1)
    this.agentSeen(agent)
    this.emit()
  }

  private agentSeen(agent: string): void {
    const a = this.agentStates.get(agent)
    if (a) a.lastSeenMs = this.clock().getTime()
    this.seen()
  }

  watchStarted(): void {
    this.watching++
    this.seen()
    this.emit()
  }

  watchEnded(): void {
    this.watching = Math.max(0, this.watching - 1)
    this.seen()
    this.emit()
  }

  complete(): void {
    this.taskPolls.clear()
    if (this.staleTimer) clearTimeout(this.staleTimer)
    if (this.pollTimer) clearInterval(this.pollTimer)
    this.subject.complete()
  }

  private emit(): void {
    if (!this.subject.closed) this.subject.next(this.current())
  }
}

/**
 * A task's poll (tasks/get of a 2026-07-28 task re-asks its wait without waiting) keeps its agent
 * listening this long after, if the wait goes on: such a client polls about every second and has
 * no request open in between.
 */
export const TASK_POLL_LISTENING_MS = 5_000

/** Whether `outcome` is a wait that is still waiting (it answered "timeout": nothing yet). */
function stillWaiting(outcome: CallOutcome): boolean {
  return outcome.ok && typeof outcome.result === 'object' && outcome.result !== null && (outcome.result as { status?: unknown }).status === 'timeout'
}

/**
 * The waits of task clients, as listening leases: each poll of a wait still waiting before its
 * deadline renews its lease for TASK_POLL_LISTENING_MS (never past the deadline), a poll that
 * finds it over ends it; `changed` is told when the count moves. A task is known by its tool,
 * arguments and deadline (its polls repeat them).
 */
export class PollLeases {
  private readonly leases = new Map<string, ReturnType<typeof setTimeout>>()

  constructor(
    private readonly changed: () => void,
    private readonly ms = TASK_POLL_LISTENING_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.leases.size
  }

  /** Account for one poll (a listening call with `pollDeadline`) and its outcome. */
  polled(name: string, args: unknown, deadline: number, outcome: CallOutcome): void {
    const key = `${name}\u0000${deadline}\u0000${JSON.stringify(args ?? {})}`
    const had = this.leases.get(key)
    if (had) clearTimeout(had)
    const left = deadline - this.now()
    if (!stillWaiting(outcome) || left <= 0) {
      if (had && this.leases.delete(key)) this.changed()
      return
    }
    const timer = setTimeout(() => {
      this.leases.delete(key)
      this.changed()
    }, Math.min(this.ms, left))
    timer.unref?.()
    this.leases.set(key, timer)
    if (!had) this.changed()
  }

  clear(): void {
    for (const timer of this.leases.values()) clearTimeout(timer)
    this.leases.clear()
  }
}

const STARTED_AT = new Date().toISOString()

/** Whether process `pid` is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Running stdio agents with a presence file in `<storeDir>/presence/` (files of dead processes are removed). */
export function countStdioAgents(storeDir: string): number {
  return readStdioAgents(storeDir).agents
}

/**
 * Running stdio agents, and their calls waiting for the person: each file may say `watching: n`
 * (`marginalia mcp` rewrites it when a listening call starts or ends), so a stdio agent that
 * waits reads "listening" as an HTTP one does.
 */
function readStdioAgents(storeDir: string): { agents: number; watching: number } {
  let names: string[]
  try {
    names = readdirSync(path.join(storeDir, 'presence'))
  } catch {
    return { agents: 0, watching: 0 }
  }
  let agents = 0
  let watching = 0
  for (const name of names) {
    const pid = Number(/^(\d+)\.json$/.exec(name)?.[1])
    if (!Number.isInteger(pid) || pid <= 0) continue
    const file = path.join(storeDir, 'presence', name)
    if (!alive(pid)) {
      rmSync(file, { force: true })
      continue
    }
    agents++
    watching += watchingIn(file)
  }
  return { agents, watching }
}

/** The `watching` count a presence file states (0 when absent or unreadable; never through a link). */
function watchingIn(file: string): number {
  try {
    const fd = openNoFollowSync(file, fsc.O_RDONLY)
    try {
      const n = (JSON.parse(readFileSync(fd, 'utf8')) as { watching?: unknown }).watching
      return typeof n === 'number' && Number.isInteger(n) && n > 0 ? Math.min(n, 1000) : 0
    } finally {
      closeSync(fd)
    }
  } catch {
    return 0
  }
}

/**
 * Announce this process as a stdio agent on the store in `storeDir` until the returned function is
 * called (or the process exits); `watching` (default 0): its calls waiting for the person now —
 * call again with the new count to update the file. Best effort: a store directory that cannot be
 * written is skipped. The file is never written through a link (a link left in its place is skipped).
 */
export function announceStdioAgent(storeDir: string, watching = 0): () => void {
  const file = path.join(storeDir, 'presence', `${process.pid}.json`)
  try {
    ensureDirectorySync(storeDir)
    ensureDirectorySync(path.dirname(file))
    const fd = openNoFollowSync(file, fsc.O_WRONLY | fsc.O_TRUNC, { create: true })
    try {
      writeSync(fd, JSON.stringify({ pid: process.pid, startedAt: STARTED_AT, ...(watching > 0 ? { watching } : {}) }) + '\n')
    } finally {
      closeSync(fd)
    }
  } catch {
    return () => {}
  }
  let remove = removers.get(file)
  if (!remove) {
    const once = (): void => rmSync(file, { force: true })
    removers.set(file, once)
    process.once('exit', once)
    remove = once
  }
  return remove
}

/** One exit hook per presence file, however often it is rewritten. */
const removers = new Map<string, () => void>()

/**
 * `registry` as `serve` offers it: every call reported to `presence`. A call of a tool tagged
 * `listening` (a watch, a question) counts as the agent listening while it runs.
 */
export function reportingCalls(registry: ToolRegistry, presence: PresenceTracker): ToolService {
  const polls = presence.taskPolls
  return {
    list: () => registry.list(),
    serverInfo: () => registry.serverInfo(),
    async call(name, args, options) {
      const listening = waitTaskOf(registry.tool(name)) !== undefined
      if (listening && options?.pollDeadline !== undefined) {
        // A task's poll: the agent listens between polls while the wait goes on.
        presence.seen()
        const outcome = await registry.call(name, args, options)
        polls.polled(name, args, options.pollDeadline, outcome)
        return outcome
      }
      if (listening) presence.watchStarted()
      else presence.seen()
      try {
        return await registry.call(name, args, options)
      } finally {
        if (listening) presence.watchEnded()
        else presence.seen()
      }
    },
  }
}
