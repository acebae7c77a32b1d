/**
 * What one MCP session handed to its agent, kept single with the other paths (hooks, the plugin
 * monitor, the channel) through the told ledger (src/store/told.ts).
 *
 * "The agent" of an MCP session is its client, by the name it gives on initialize (or in a
 * 2026-07-28 request's `_meta`), mapped to the agent name its hooks use (`agentOfClient`), in the
 * project whose store this server serves (the ledger lives beside that store). The session does
 * not know the hook's session id, so it records under `AGENT:*`: every session of that agent in
 * this project counts it as told (a session's start still hears what it was not told itself).
 *
 * - A wait (a `listening` tool: watch_annotations, watch_changes, ask, await_reply) answers what
 *   it is asked, whatever was told before; the pending annotations it hands over are recorded.
 * - A push of this session (the channel) waits while one of its waits runs, then goes only if the
 *   annotation is still pending and nobody handed it to this agent yet: the wait that was already
 *   listening delivers it, and the push does not repeat it.
 * - Without a ledger (a PostgreSQL store has no folder) the session still remembers what it
 *   handed itself, so its own pushes stay single.
 */
import { agentOfClient, type ToldLedger } from '../store/told.js'
import type { CallOutcome } from '../tools/registry.js'

/** How many ids a session remembers having handed over without a ledger. */
const MAX_REMEMBERED = 2_000

export class Deliveries {
  private waits = 0
  private held: (() => void)[] = []
  /** Ids this session handed over (bounded, oldest forgotten first). */
  private readonly handed = new Set<string>()

  constructor(
    private readonly ledger: ToldLedger | undefined,
    private readonly log: (message: string) => void = () => {},
  ) {}

  /** The ledger key of the agent behind an MCP client name: `AGENT:*`. */
  static keyOf(clientName: string | undefined): string {
    return `${agentOfClient(clientName)}:*`
  }

  /** Run a wait: pushes of this session are held until no wait runs; what it handed is recorded. */
  async wait(agentKey: string, run: () => Promise<CallOutcome>): Promise<CallOutcome> {
    this.waits++
    try {
      const outcome = await run()
      this.record(agentKey, handedIds(outcome))
      return outcome
    } finally {
      if (--this.waits === 0) this.release()
    }
  }

  /** Records ids handed to `agentKey` by this session (and in the ledger, when there is one). */
  record(agentKey: string, ids: readonly string[]): void {
    if (ids.length === 0) return
    for (const id of ids) {
      this.handed.delete(id)
      this.handed.add(id)
    }
    while (this.handed.size > MAX_REMEMBERED) this.handed.delete(this.handed.values().next().value!)
    try {
      this.ledger?.markTold(agentKey, ids)
    } catch (error) {
      this.log(`the told ledger: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  /** Whether `id` was handed to `agentKey` already, by this session or (per the ledger) any path. */
  told(agentKey: string, id: string): boolean {
    if (this.handed.has(id)) return true
    try {
      return this.ledger !== undefined && this.ledger.untold(agentKey, [id]).length === 0
    } catch (error) {
      this.log(`the told ledger: ${error instanceof Error ? error.message : String(error)}`)
      return false
    }
  }

  /** Runs `push` now, or once no wait of this session runs (in the order asked). */
  whenNoWait(push: () => void): void {
    if (this.waits === 0) push()
    else this.held.push(push)
  }

  private release(): void {
    const held = this.held
    this.held = []
    for (const push of held) push()
  }
}

/**
 * The pending annotations a wait's answer hands over: `annotations` (watch_annotations, and any
 * wait that answers with a page), and the records of `annotation.created` changes (watch_changes).
 */
export function handedIds(outcome: CallOutcome): string[] {
  if (!outcome.ok) return []
  const result = outcome.result as { annotations?: unknown; changes?: unknown; events?: unknown }
  const ids: string[] = []
  if (Array.isArray(result.annotations)) {
    for (const a of result.annotations as { id?: unknown; status?: unknown }[]) if (typeof a?.id === 'string' && a.status === 'pending') ids.push(a.id)
  }
  for (const list of [result.changes, result.events]) {
    if (!Array.isArray(list)) continue
    for (const e of list as { type?: unknown; annotation?: { id?: unknown; status?: unknown } }[]) {
      if (e?.type === 'annotation.created' && typeof e.annotation?.id === 'string' && e.annotation.status === 'pending') ids.push(e.annotation.id)
    }
  }
  return ids
}
