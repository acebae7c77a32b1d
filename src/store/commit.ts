/**
 * The group-commit engine: how commands become durable, published events.
 *
 * Commands queue up on `work`; `coalesceBatches` starts the first at once and gathers those
 * that arrive while a write is in flight into the next batch, so a burst of N commands costs
 * two writes, not N. One batch is one adapter transaction (see the sequence in persistence.ts):
 *
 *   1. `adapter.transact(decide)`: the adapter takes exclusive access and reads what other
 *      processes wrote since its last read;
 *   2. `decide(external)`: publish those events, then decide each command in order against a
 *      tentative state that includes the earlier commands of the batch. A refused command
 *      leaves no event and does not disturb the others. Each event is stamped with the next rev
 *      and applied by the one reducer;
 *   3. the adapter makes the events durable and resolves;
 *   4. only then are the events published (state, indexes, `changes$`) and the commands
 *      settled. If the transaction fails, nothing of the batch is published, and every command
 *      rejects: a refused one with its own error, the others with the write error.
 *
 * A sync request (a poll for other processes' writes) is a batch of its own when no command
 * is waiting, and rides along with a commit otherwise (the commit catches up anyway).
 */
import { Subject, lastValueFrom } from 'rxjs'
import { ignoreElements } from 'rxjs/operators'
import type { EventDraft, StoreEvent } from './events.js'
import { applyEvent, type StoreState } from './reducer.js'
import { coalesceBatches } from './coalesce.js'
import type { Decision, StoreAdapter } from './persistence.js'
import type { LiveState } from './live.js'
import type { Verdict } from './commands.js'
import { StoreDataError } from './errors.js'

/**
 * A command, decided inside the transaction. Async because a command may first make something
 * durable that its events point to (the archive's lines).
 */
export type Decide<T> = (state: StoreState, now: string) => Promise<Verdict<T>>

interface Command<T> {
  kind: 'command'
  decide: Decide<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}
interface SyncRequest {
  kind: 'sync'
  done: () => void
}
type WorkItem = Command<unknown> | SyncRequest

interface Step {
  event: StoreEvent
  before: StoreState
  after: StoreState
}

export class CommitEngine {
  private readonly work = new Subject<WorkItem>()
  private readonly drained: Promise<void>
  private syncRequested = false
  /** Set once an event read from the adapter was refused: no more writes (see `refuse`). */
  private refused: StoreDataError | undefined
  private closed = false

  constructor(
    private readonly adapter: StoreAdapter,
    private readonly live: LiveState,
    private readonly clock: () => Date,
    private readonly onError: (error: unknown) => void,
  ) {
    this.drained = lastValueFrom(this.work.pipe(coalesceBatches((batch) => this.runBatch(batch)), ignoreElements()), { defaultValue: undefined })
  }

  /** Decide and commit one command; resolves with its result once its events are durable and published. */
  submit<T>(decide: Decide<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.work.next({ kind: 'command', decide, resolve, reject } as Command<unknown>))
  }

  /** Catch up with other processes' writes; resolves once done (after any commit ahead of it). */
  sync(): Promise<void> {
    return new Promise((done) => this.work.next({ kind: 'sync', done }))
  }

  /** A background sync, at most one waiting at a time. */
  requestSync(): void {
    if (this.syncRequested || this.closed) return
    this.syncRequested = true
    this.work.next({ kind: 'sync', done: () => {} })
  }

  /** Take no more work; resolves once everything queued is done. */
  close(): Promise<void> {
    this.closed = true
    this.work.complete()
    return this.drained
  }

  private async runBatch(batch: WorkItem[]): Promise<void> {
    const commands = batch.filter((item): item is Command<unknown> => item.kind === 'command')
    this.syncRequested = false
    if (this.refused && !(await this.recover())) {
      for (const c of commands) c.reject(this.refused)
      for (const item of batch) if (item.kind === 'sync') item.done()
      return
    }
    try {
      if (commands.length > 0) await this.commit(commands)
      else this.publishExternal(await this.adapter.poll())
    } catch (error) {
      if (commands.length === 0) this.onError(error)
      for (const c of commands) c.reject(error)
    } finally {
      for (const item of batch) if (item.kind === 'sync') item.done()
    }
  }

  /**
   * Recover in place from a refusal: read the whole store again (snapshot + log). If it now makes
   * a store (the damaged event was repaired or removed), replace the state, tell subscribers to
   * refetch (a `reset`), and write again. Otherwise stay refused; the next command or sync tries
   * again. Without `adapter.reload`, a restart is the way back.
   */
  private async recover(): Promise<boolean> {
    if (!this.adapter.reload) return false
    try {
      const loaded = await this.adapter.reload()
      this.live.reload(loaded, this.adapter.location, 'reloaded after a refused event')
    } catch {
      return false
    }
    this.onError(new Error(`${this.adapter.location}: the store makes sense again; reloaded it in place at rev ${this.live.state.rev} and writing again`))
    this.refused = undefined
    return true
  }

  /**
   * Fail closed: another process's event could not be applied, so this process's state is behind
   * its adapter. Deciding from it would stamp revs the log already has; from now on every command
   * is refused with this error (nothing is written) until a reload of the store succeeds (see
   * `recover`: tried before each later batch) or the process is restarted.
   */
  private refuse(error: unknown): never {
    if (error instanceof StoreDataError && !this.refused) {
      this.refused = new StoreDataError(
        error.location,
        `${error.problem}. This process stopped writing so that no rev is written twice (it is at rev ${this.live.state.rev}); repair or remove the damaged event: the process reloads the store at its next write (no restart needed)`,
        { cause: error },
      )
    }
    throw this.refused ?? error
  }

  private publishExternal(events: StoreEvent[]): void {
    try {
      this.live.publishExternal(events, this.adapter.location)
    } catch (error) {
      this.refuse(error)
    }
  }

  private async commit(commands: Command<unknown>[]): Promise<void> {
    let steps: Step[] = []
    let outcomes: { command: Command<unknown>; ok: boolean; value: unknown }[] = []
    const decide = async (external: StoreEvent[]): Promise<Decision> => {
      this.publishExternal(external)
      steps = []
      outcomes = []
      let tentative = this.live.state
      for (const command of commands) {
        const mark = steps.length
        const start = tentative
        try {
          const now = this.clock().toISOString()
          const { drafts, result } = await command.decide(tentative, now)
          for (const draft of drafts) {
            const event = stamp(draft, tentative.rev + 1, now)
            const after = applyEvent(tentative, event)
            steps.push({ event, before: tentative, after })
            tentative = after
          }
          outcomes.push({ command, ok: true, value: result(tentative) })
        } catch (error) {
          steps.length = mark
          tentative = start
          outcomes.push({ command, ok: false, value: error })
        }
      }
      const events = steps.map((s) => s.event)
      return { events, ...this.live.view(tentative, events) }
    }
    try {
      await this.adapter.transact(decide)
    } catch (writeError) {
      // Nothing of this batch was written: refused commands keep their own error, the rest get the write error.
      for (const o of outcomes) o.command.reject(o.ok ? writeError : o.value)
      for (const c of commands) c.reject(writeError)
      return
    }
    for (const step of steps) this.live.publish(step.event, step.before, step.after)
    if (steps.length > 0) this.live.announce()
    for (const o of outcomes) (o.ok ? o.command.resolve : o.command.reject)(o.value)
  }
}

function stamp(draft: EventDraft, rev: number, at: string): StoreEvent {
  const event = { ...draft, rev, at } as StoreEvent
  if (event.type === 'session.created') event.session = { ...event.session, rev }
  if (event.type === 'annotation.created') event.annotation = { ...event.annotation, rev }
  return event
}
