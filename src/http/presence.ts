/**
 * Agent presence, as the HTTP MCP endpoint sees it: how many MCP sessions are open, how many
 * calls are inside `watch_annotations` right now, and when a tool was last called. The overlay
 * shows it ("agent watching"). Stdio agents run in another process and are not seen here.
 */
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs'
import type { Store } from '../store/store.js'
import { ToolRegistry, type CallOptions, type CallOutcome, type RegistryOptions } from '../tools/registry.js'

export interface Presence {
  /** At least one MCP session is open. */
  connected: boolean
  /** Open MCP sessions. */
  sessions: number
  /** Calls currently waiting inside watch_annotations. */
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

/** Tools during which the agent is listening for the person. */
const LISTENING_TOOLS = new Set(['watch_annotations', 'watch_changes', 'ask', 'await_reply'])

/** The tool registry, reporting every call to a presence tracker. */
export class TrackedRegistry extends ToolRegistry {
  constructor(
    store: Store,
    private readonly presence: PresenceTracker,
    options: RegistryOptions = {},
  ) {
    super(store, options)
  }

  override async call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const watching = LISTENING_TOOLS.has(name)
    if (watching) this.presence.watchStarted()
    else this.presence.seen()
    try {
      return await super.call(name, args, options)
    } finally {
      if (watching) this.presence.watchEnded()
      else this.presence.seen()
    }
  }
}
