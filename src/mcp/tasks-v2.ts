/**
 * Waits as tasks for 2026-07-28 clients (the MCP Tasks extension, `io.modelcontextprotocol/tasks`,
 * wire generation V2): a request that declares the extension in its client capabilities and
 * calls a wait (watch_annotations, watch_changes, ask, await_reply) is answered at once with a
 * task (`resultType: "task"`); the client polls tasks/get, which carries the tool's result once it
 * exists. No request outlives the client's timeout, however long the person takes.
 *
 * Stateless, so any process on the same store answers: every wait asks "has X happened after a
 * point?" and answers `status: "timeout"` when nothing came. The task id is an opaque, versioned
 * encoding of that question — the tool, its arguments with the starting point fixed at creation,
 * the deadline, the owner (an identity's id, or '' without sign-in), the store that issued it (a
 * fingerprint of its location: another file or PostgreSQL schema is another store), the creation
 * time and a random nonce. tasks/get re-asks the question now, without waiting, under the caller's tool policy: the
 * answer, or the timeout answer once the deadline has passed, completes the task; otherwise it is
 * working. A forged id therefore yields nothing the caller could not get by calling the tool; an id
 * of another owner, or issued by a server of another store, is "not found". `ask` posts its question when the task is created and its task
 * then awaits the reply to that question, so polling never asks twice.
 *
 * A task's deadline is the call's timeoutMs (at most MAX_WATCH_TIMEOUT_MS, 5 min), not clamped to
 * the plain call's maximum wait: tasks are how long waits survive short client timeouts. The task
 * is kept (tasks/get answers) until RETAIN_MS after its deadline.
 *
 * tasks/cancel is acknowledged (the id is checked) but changes nothing: nothing runs between polls,
 * so there is nothing to stop and no state to mark. The spec allows this (cancellation is eventually
 * consistent and may end in another terminal status): the task completes at its deadline with the
 * timeout answer, or earlier with what arrived. tasks/update is acknowledged and ignored: these
 * tasks never ask for input.
 */
import { createHash, randomBytes } from 'node:crypto'
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult, type ClientCapabilities, type Server, type ServerContext } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import { DEFAULT_WATCH_TIMEOUT_MS, MAX_WATCH_TIMEOUT_MS } from '../store/watch.js'
import type { WaitTask } from '../tools/define.js'
import type { CallOutcome } from '../tools/registry.js'

/**
 * The tasks extension's id (TASKS_EXTENSION_ID_V2 of @modelcontextprotocol/ext-tasks/core/v2),
 * written here: that module is the whole V2 wire schema set, and its `import { z }` would bring
 * zod's every locale into the code `marginalia mcp` parses before it answers.
 */
const TASKS_EXTENSION_ID_V2 = 'io.modelcontextprotocol/tasks'

/** The extension's capability, as the server declares it (no settings are defined). */
export const TASKS_EXTENSION_V2 = { [TASKS_EXTENSION_ID_V2]: {} }

/** How often a client should poll tasks/get. */
const POLL_INTERVAL_MS = 1_000
/** How long after its deadline a task still answers tasks/get. */
const RETAIN_MS = 10 * 60_000
/** The longest task id accepted: well above any id this server makes. */
const MAX_TASK_ID_LENGTH = 4_096
/** How far in the future a task's creation time may lie (clocks of processes on one store differ a little). */
const CLOCK_SKEW_MS = 60_000
const PREFIX = 'mwt1_'

const Args = z.record(z.string(), z.unknown())

/** What a task id encodes. */
const TaskSpec = z.strictObject({
  v: z.literal(1),
  // The wait a poll calls; checked against the server's waits at each poll.
  t: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
  a: Args,
  c: z.number().int().min(0),
  d: z.number().int().min(0),
  o: z.string().max(256),
  s: z.string().regex(/^[a-f0-9]{16}$/),
  n: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
})
type TaskSpec = z.infer<typeof TaskSpec>

/** What the tasks need from the server that serves them. */
export interface TasksV2Host {
  /** Call `name` as the caller of `ctx` may, with no waiting (the answer as things stand now). */
  evaluate: (ctx: ServerContext, name: string, args: Record<string, unknown>, deadline?: number) => Promise<CallOutcome>
  /** A call's outcome as tools/call sends it. */
  toResult: (ctx: ServerContext, name: string, outcome: CallOutcome) => CallToolResult
  /** Whose tasks the caller of `ctx` sees. */
  owner: (ctx: ServerContext) => string
  /** The wait `name` as its definition declares it (tools/define.ts `listening`), or undefined when it is not one of this server's waits. */
  waitOf: (name: string) => Required<WaitTask> | undefined
  /** The store the tasks wait on (storeTag): an id issued on another store is not found here. */
  store: string
  clock?: () => number
}

/** Whether the request's client declared the extension (a 2026-07-28 request carries its capabilities). */
export function declaresTasksV2(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions
  const declared = extensions?.[TASKS_EXTENSION_ID_V2]
  return typeof declared === 'object' && declared !== null && !Array.isArray(declared)
}

/**
 * Whether `name` runs as a V2 task for a client that declares the extension: a wait whose polled
 * tool is a wait this server exposes too (ask's task polls await_reply).
 */
export function runsAsTaskV2(name: string, waitOf: TasksV2Host['waitOf']): boolean {
  const wait = waitOf(name)
  return wait !== undefined && waitOf(wait.polls) !== undefined
}

/**
 * A tools/call of the wait `name` by a task-aware client: the question is asked once now (ask
 * posts its question), then answered with a task. A call that fails at once (bad arguments, an
 * unknown annotation) is answered with that failure, not a task.
 */
export async function createTaskV2(host: TasksV2Host, ctx: ServerContext, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const clock = host.clock ?? Date.now
  const created = clock()
  const outcome = await host.evaluate(ctx, name, args)
  if (!outcome.ok) return host.toResult(ctx, name, outcome)
  const timeoutMs = typeof args.timeoutMs === 'number' ? Math.min(args.timeoutMs, MAX_WATCH_TIMEOUT_MS) : DEFAULT_WATCH_TIMEOUT_MS
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => key !== 'timeoutMs'))
  const result = outcome.result
  const wait = host.waitOf(name)!
  // The starting point, fixed as the wait declares it (ask: the question it asked).
  const spec: TaskSpec = { v: 1, t: wait.polls, a: wait.fixed(rest, result), c: created, d: created + timeoutMs, o: host.owner(ctx), s: host.store, n: randomBytes(12).toString('base64url') }
  const settled = isSettled(result, spec, created)
  return {
    resultType: 'task',
    ...taskFields(spec, created, settled ? 'completed' : 'working'),
    ...(settled ? {} : { statusMessage: statusMessage(host, spec, created) }),
  }
}

/** Install tasks/get, tasks/update and tasks/cancel (V2) on `server`. */
export function registerTasksV2(server: Server, host: TasksV2Host, declared: (ctx: ServerContext) => boolean): void {
  const clock = host.clock ?? Date.now
  const TaskIdParams = z.looseObject({ taskId: z.string() })
  const open = (params: { taskId: string }, ctx: ServerContext): TaskSpec => {
    if (!declared(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } })
    const spec = decodeTaskId(params.taskId, clock())
    if (spec.o !== host.owner(ctx) || spec.s !== host.store || host.waitOf(spec.t) === undefined) throw notFound()
    if (clock() > spec.d + RETAIN_MS) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `taskId: the task has expired (its wait ended at ${new Date(spec.d).toISOString()}, and tasks are kept ${RETAIN_MS / 60_000} min after that). Call the tool again.`)
    return spec
  }
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async (params, ctx) => {
    const spec = open(params, ctx)
    const now = clock()
    const outcome = await host.evaluate(ctx, spec.t, spec.a, spec.d)
    const settled = !outcome.ok || isSettled(outcome.result, spec, now)
    if (!settled) return { ...taskFields(spec, now, 'working'), statusMessage: statusMessage(host, spec, now) }
    // The result inline, as tools/call would have answered it on this revision.
    return { ...taskFields(spec, now, 'completed'), result: { resultType: 'complete', ...host.toResult(ctx, spec.t, outcome) } }
  })
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, (params, ctx) => {
    open(params, ctx)
    return {}
  })
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, (params, ctx) => {
    open(params, ctx)
    return {}
  })
}

/** Done: the wait found what it waited for (anything but `timeout`), or its deadline has passed. */
function isSettled(result: Record<string, unknown>, spec: TaskSpec, now: number): boolean {
  return result.status !== 'timeout' || now >= spec.d
}

function taskFields(spec: TaskSpec, now: number, status: 'working' | 'completed'): Record<string, unknown> {
  return {
    taskId: encodeTaskId(spec),
    status,
    createdAt: new Date(spec.c).toISOString(),
    lastUpdatedAt: new Date(Math.max(now, spec.c)).toISOString(),
    ttlMs: spec.d - spec.c + RETAIN_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  }
}

function statusMessage(host: TasksV2Host, spec: TaskSpec, now: number): string {
  const waitingFor = host.waitOf(spec.t)?.waitingFor(spec.a) ?? 'Waiting for the person'
  return `${waitingFor} (${Math.max(0, Math.ceil((spec.d - now) / 1000))} s left).`
}

function encodeTaskId(spec: TaskSpec): string {
  return PREFIX + Buffer.from(JSON.stringify(spec)).toString('base64url')
}

/** The task a task id names. The id is untrusted input: every field is checked, and a bad one named. */
function decodeTaskId(taskId: string, now: number): TaskSpec {
  const bad = (why: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `taskId: ${why}; pass the taskId this server returned from tools/call, unchanged.`)
  if (taskId.length > MAX_TASK_ID_LENGTH) throw bad(`too long (${taskId.length} characters; a task id is at most ${MAX_TASK_ID_LENGTH})`)
  if (!taskId.startsWith(PREFIX)) throw bad('not a task id of this server')
  const body = taskId.slice(PREFIX.length)
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw bad('not a task id of this server (not base64url)')
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  } catch {
    throw bad('not a task id of this server (undecodable)')
  }
  const parsed = TaskSpec.safeParse(decoded)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw bad(`malformed (${issue?.path.join('.') || 'its content'}: ${issue?.message ?? 'invalid'})`)
  }
  const spec = parsed.data
  if (spec.d < spec.c || spec.d - spec.c > MAX_WATCH_TIMEOUT_MS) throw bad('malformed (its deadline is not within 5 minutes of its creation)')
  if (spec.c > now + CLOCK_SKEW_MS) throw bad('malformed (it was created in the future)')
  return spec
}

function notFound(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'taskId: Failed to retrieve task: task not found (it was never yours, or another store issued it).')
}

const memoryTags = new WeakMap<Store, string>()

/**
 * The store a task id is bound to: a fingerprint of its location, which every process on the same
 * store shares (a file's path, a PostgreSQL database and schema). A memory store is only its own
 * instance's, so it gets a random one.
 */
export function storeTag(store: Store): string {
  if (store.location !== 'memory') return createHash('sha256').update(store.location).digest('hex').slice(0, 16)
  let tag = memoryTags.get(store)
  if (tag === undefined) memoryTags.set(store, (tag = randomBytes(8).toString('hex')))
  return tag
}
