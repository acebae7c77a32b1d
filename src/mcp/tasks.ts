/**
 * Waits as tasks (the MCP Tasks extension, wire generation of 2025-11-25, schemas from
 * `@modelcontextprotocol/ext-tasks`): a client that declares task support and calls a wait
 * (a tool tagged `listening`: watch_annotations, watch_changes, ask, await_reply) with
 * `params.task` is answered at once with a task; the wait runs on, and the client polls
 * tasks/get and fetches the result with tasks/result, each a short request, so no request
 * outlives the client's timeout however long the person takes. tasks/list and tasks/cancel
 * complete the set. A task is its creator's: another owner sees "not found".
 *
 * The table lives in the process that runs the wait, with the 2025 session that created it
 * (sessions are per process). Tasks end after their time to live (default 10 min after the
 * result), and at most MAX_TASKS are kept (the oldest finished go first). The table is shared by
 * every caller of the process, so each owner (an identity, else a 2025 session) holds at most
 * MAX_TASKS_PER_OWNER of them: one caller that starts waits without end runs into its own limit,
 * not into everyone's.
 */
import { randomUUID } from 'node:crypto'
import { CancelTaskRequestV1Schema, GetTaskRequestV1Schema, GetTaskResultRequestV1Schema, ListTasksRequestV1Schema, type TaskStatusV1, type TaskV1 } from '@modelcontextprotocol/ext-tasks/core/v1'
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Server } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { WaitTask } from '../tools/define.js'

/** The `_meta` key a task's result carries, naming its task. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task'
const DEFAULT_TTL_MS = 10 * 60_000
const MAX_TTL_MS = 24 * 60 * 60_000
const POLL_INTERVAL_MS = 1_000
const MAX_TASKS = 1_000
/** A tenth of the table: it takes ten callers at their limit to fill it. */
const MAX_TASKS_PER_OWNER = 100
const PAGE_SIZE = 100

interface TaskEntry {
  task: TaskV1
  owner: string
  result: Promise<CallToolResult>
  controller: AbortController
  expires: ReturnType<typeof setTimeout> | undefined
}

export interface TaskTableOptions {
  /** The wait `name` is, as its definition declares it (tools/define.ts `listening`), or undefined: only a wait runs as a task. */
  waitOf: (name: string) => Required<WaitTask> | undefined
  /** The clock for task timestamps. */
  clock?: () => Date
}

/** The task capability a server with waits declares. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

export class TaskTable {
  private readonly tasks = new Map<string, TaskEntry>()
  private readonly clock: () => Date

  constructor(private readonly options: TaskTableOptions) {
    this.clock = options.clock ?? (() => new Date())
  }

  supports(name: string): boolean {
    return this.options.waitOf(name) !== undefined
  }

  /** The wait `name` is, for the stateless tasks of 2026-07-28 (tasks-v2.ts). */
  waitOf(name: string): Required<WaitTask> | undefined {
    return this.options.waitOf(name)
  }

  /**
   * Start `run` as a task of `owner` and answer at once: `{ task }`. `ttlMs` is the client's wish
   * (bounded); the task and its result are kept that long after the result exists.
   */
  start(owner: string, ttlMs: number | undefined, run: (signal: AbortSignal, progress: (message: string) => void) => Promise<CallToolResult>): { task: TaskV1 } {
    this.makeRoomFor(owner)
    this.makeRoom()
    const now = this.clock().toISOString()
    const ttl = Math.min(Math.max(ttlMs ?? DEFAULT_TTL_MS, 1_000), MAX_TTL_MS)
    const controller = new AbortController()
    const task: TaskV1 = { taskId: `task_${randomUUID()}`, status: 'working', createdAt: now, lastUpdatedAt: now, ttl, pollInterval: POLL_INTERVAL_MS }
    const entry: TaskEntry = { task, owner, controller, expires: undefined, result: Promise.resolve({ content: [] }) }
    const settle = (status: TaskStatusV1, statusMessage?: string): void => {
      if (entry.task.status !== 'working') return
      entry.task = { ...entry.task, status, lastUpdatedAt: this.clock().toISOString(), ...(statusMessage !== undefined ? { statusMessage } : {}) }
      entry.expires = setTimeout(() => this.tasks.delete(task.taskId), ttl)
      entry.expires.unref?.()
    }
    entry.result = run(controller.signal, (message) => {
      if (entry.task.status === 'working') entry.task = { ...entry.task, statusMessage: message, lastUpdatedAt: this.clock().toISOString() }
    }).then(
      (result) => {
        settle('completed')
        return withRelatedTask(result, task.taskId)
      },
      (e: unknown) => {
        const message = e instanceof Error ? e.message : String(e)
        settle(controller.signal.aborted ? 'cancelled' : 'failed', message)
        return withRelatedTask({ isError: true, content: [{ type: 'text', text: message }] }, task.taskId)
      },
    )
    this.tasks.set(task.taskId, entry)
    return { task: { ...task } }
  }

  /** Install tasks/get, tasks/result, tasks/list and tasks/cancel on `server`, for tasks of `owner()`. */
  register(server: Server, owner: () => string): void {
    server.setRequestHandler('tasks/get', { params: GetTaskRequestV1Schema.shape.params }, (params) => ({ ...this.entry(params.taskId, owner()).task }))
    server.setRequestHandler('tasks/result', { params: GetTaskResultRequestV1Schema.shape.params }, async (params, ctx) => {
      const entry = this.entry(params.taskId, owner())
      // Waits for the result; a client that gives up cancels only this request, not the task.
      const aborted = new Promise<never>((_, reject) => ctx.mcpReq.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }))
      return (await Promise.race([entry.result, aborted])) as Record<string, unknown>
    })
    server.setRequestHandler('tasks/list', { params: ListTasksRequestV1Schema.shape.params.unwrap().optional().or(z.undefined()) }, (params) => {
      const mine = [...this.tasks.values()].filter((e) => e.owner === owner()).sort((a, b) => (a.task.createdAt < b.task.createdAt ? -1 : a.task.createdAt > b.task.createdAt ? 1 : a.task.taskId < b.task.taskId ? -1 : 1))
      const start = params?.cursor === undefined ? 0 : Number.parseInt(params.cursor, 10)
      if (!Number.isInteger(start) || start < 0) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'cursor: not a cursor from tasks/list; omit it to start from the first task.')
      const page = mine.slice(start, start + PAGE_SIZE).map((e) => ({ ...e.task }))
      return { tasks: page, ...(start + PAGE_SIZE < mine.length ? { nextCursor: String(start + PAGE_SIZE) } : {}) }
    })
    server.setRequestHandler('tasks/cancel', { params: CancelTaskRequestV1Schema.shape.params }, (params) => {
      const entry = this.entry(params.taskId, owner())
      if (entry.task.status !== 'working') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `taskId: task ${params.taskId} is already ${entry.task.status}; only a working task can be cancelled.`)
      entry.controller.abort()
      entry.task = { ...entry.task, status: 'cancelled', lastUpdatedAt: this.clock().toISOString() }
      entry.expires = setTimeout(() => this.tasks.delete(params.taskId), entry.task.ttl ?? DEFAULT_TTL_MS)
      entry.expires.unref?.()
      return { ...entry.task }
    })
  }

  /** Cancel every running task and forget them all (server shutdown). */
  close(): void {
    for (const entry of this.tasks.values()) {
      entry.controller.abort()
      if (entry.expires) clearTimeout(entry.expires)
    }
    this.tasks.clear()
  }

  private entry(taskId: string, owner: string): TaskEntry {
    const entry = this.tasks.get(taskId)
    if (!entry || entry.owner !== owner) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `taskId: no task ${JSON.stringify(taskId.slice(0, 80))} (it ended after its ttl, or was never yours).`)
    return entry
  }

  /**
   * At most MAX_TASKS_PER_OWNER per owner: the owner's own oldest finished task gives way; with
   * every one of its tasks still running, refuse, naming the limit (the other owners' are never touched).
   */
  private makeRoomFor(owner: string): void {
    let mine = 0
    let oldestFinished: string | undefined
    for (const [id, entry] of this.tasks) {
      if (entry.owner !== owner) continue
      mine++
      if (oldestFinished === undefined && entry.task.status !== 'working') oldestFinished = id
    }
    if (mine < MAX_TASKS_PER_OWNER) return
    if (oldestFinished !== undefined) {
      const entry = this.tasks.get(oldestFinished)!
      if (entry.expires) clearTimeout(entry.expires)
      this.tasks.delete(oldestFinished)
      return
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `Too many tasks for this caller: all ${MAX_TASKS_PER_OWNER} of yours are running (the limit per caller). Cancel one (tasks/cancel), wait for one to finish, or call without a task.`,
    )
  }

  /** At most MAX_TASKS: the oldest finished task gives way; with every one still running, refuse. */
  private makeRoom(): void {
    if (this.tasks.size < MAX_TASKS) return
    for (const [id, entry] of this.tasks) {
      if (entry.task.status !== 'working') {
        if (entry.expires) clearTimeout(entry.expires)
        this.tasks.delete(id)
        return
      }
    }
    throw new ProtocolError(ProtocolErrorCode.InternalError, `Too many tasks: ${MAX_TASKS} are running. Cancel one (tasks/cancel) or call without a task.`)
  }
}

function withRelatedTask(result: CallToolResult, taskId: string): CallToolResult {
  return { ...result, _meta: { ...result._meta, [RELATED_TASK]: { taskId } } }
}
