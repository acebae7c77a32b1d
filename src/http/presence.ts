/**
 * Agent presence, as the HTTP MCP endpoint sees it: how many MCP sessions are open, how many
 * calls are waiting for the person right now (inside a tool tagged `listening`: watch_annotations,
 * watch_changes, ask, await_reply), and when a tool was last called. The overlay shows it
 * ("agent listening"). Stdio agents run in another process and are not seen here.
 */
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs'
import type { ToolRegistry, ToolService } from '../tools/registry.js'

export interface Presence {
  /** At least one MCP session is open. */
  connected: boolean
  /** Open MCP sessions. */
  sessions: number
  /** Calls currently waiting for the person (inside a listening tool). */
  watching: number
  /** When an MCP request or tool call was last seen (ISO-8601 UTC). */
  lastSeenAt?: string
}

export class PresenceTracker {
  private sessions = 0
  private watching = 0
  private lastSeenAt: string | undefined
  private readonly subject: BehaviorSubject<Presence>
  /** The current presence, then every change of `connected`, `sessions` or `watching` (lastSeenAt alone does not emit). */
  readonly presence$: Observable<Presence>

  constructor(private readonly clock: () => Date = () => new Date()) {
    this.subject = new BehaviorSubject(this.current())
    this.presence$ = this.subject.pipe(distinctUntilChanged((a, b) => a.sessions === b.sessions && a.watching === b.watching))
  }

  current(): Presence {
    const p: Presence = { connected: this.sessions > 0, sessions: this.sessions, watching: this.watching }
    if (this.lastSeenAt !== undefined) p.lastSeenAt = this.lastSeenAt
    return p
  }

  seen(): void {
    this.lastSeenAt = this.clock().toISOString()
  }

  sessionOpened(): void {
    this.sessions++
    this.seen()
    this.emit()
  }

  sessionClosed(): void {
    this.sessions = Math.max(0, this.sessions - 1)
    this.emit()
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
    this.subject.complete()
  }

  private emit(): void {
    this.subject.next(this.current())
  }
}

/**
 * `registry` as `serve` offers it: every call reported to `presence`. A call of a tool tagged
 * `listening` (a watch, a question) counts as the agent listening while it runs.
 */
export function reportingCalls(registry: ToolRegistry, presence: PresenceTracker): ToolService {
  return {
    list: () => registry.list(),
    serverInfo: () => registry.serverInfo(),
    async call(name, args, options) {
      const listening = registry.tool(name)?.listening === true
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
