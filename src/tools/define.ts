import type { ContentBlock, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/server'
import { z as zod, type z } from 'zod'
import type { Store } from '../store/store.js'
import type { SourceOptions } from '../sources/options.js'

export interface ToolContext {
  store: Store
  /** Aborted when the client cancels the call (or the connection closes). */
  signal: AbortSignal
  /** Report progress; sent only when the client asked for it with a progress token. */
  progress(progress: number, message?: string): void
  /** Size limits for results. */
  limits: ToolLimits
  /** The app's source (project root, manifest, editor) when the server was given it: get_annotation reads the lines around a location. */
  sources?: SourceOptions
  /**
   * The MCP side of the call, present when a client called the tool over MCP (absent for
   * in-process calls): for plugin tools that log, report progress their own way, or ask the
   * client something (sampling, elicitation).
   */
  mcp?: McpCallContext
}

export interface McpCallContext {
  /** Send a notification tied to this call (e.g. `notifications/message`, `notifications/progress`). */
  notify(notification: ServerNotification): Promise<void>
  /** Send a request to the client tied to this call (e.g. `sampling/createMessage`), validated with `resultSchema`. */
  request<S extends z.ZodType>(request: ServerRequest, resultSchema: S): Promise<z.output<S>>
  /** The progress token the client sent, if any. */
  progressToken?: string | number
  /** The MCP session (Streamable HTTP), if any. */
  sessionId?: string
  /** Close this call's SSE stream so the client reconnects and resumes (Streamable HTTP with resumability only). */
  closeStream?: () => void
}

interface ToolLimits {
  /** No result may exceed this many bytes on the wire (structured content plus text). */
  byteBudget: number
  /** watch_annotations answers once no annotation arrived for this long (0: at the first one). */
  burstSettleMs: number
  /** No wait lasts longer than this (a longer timeoutMs is clamped to it). */
  maxWaitMs: number
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string
  /**
   * For people (a client's tool list, its confirmation prompts); default: from the name
   * (`get_weather` → `Get weather`). tools/list carries it only when it says more than the name.
   */
  title?: string
  /** Written for the model that reads it: when to use the tool and what comes back. */
  description: string
  input: I
  output: O
  /**
   * Whether tools/list publishes the output schema (default true). A tool whose answer is its text
   * (a mutation's one line), or whose output says only "an object", lists none: clients then
   * neither demand nor check its structured content, which still comes with every result.
   */
  listOutput?: boolean
  /**
   * Hints for clients. `readOnlyHint: true` also classifies the tool for the `read-only`
   * permission profile, so a new tool classifies itself.
   */
  annotations: ToolAnnotations
  /**
   * Deletes or archives data. A privileged tool is exposed only when allowed by name
   * (`allow: ['its_name']`) or under the `full` profile.
   */
  privileged?: boolean
  /**
   * The call waits for the person (a watch, a question): while it runs, the agent counts as
   * listening in the presence that `serve` reports to the page, and it runs as a task for a client
   * that asks for one — a 2025-11-25 task in the session's table, or a stateless 2026-07-28 task
   * whose polls re-ask the wait as `WaitTask` says (`true`: it polls itself with the call's
   * arguments).
   */
  listening?: boolean | WaitTask
  /**
   * Its result is what the inbox shows: a host that renders MCP Apps may show the inbox app beside
   * it (listed with `_meta.ui.resourceUri`, src/mcp/app.ts).
   */
  showsInApp?: boolean
  /** Other names accepted for parameters (`{ alias: name }`), besides the common ones (tools/inputs.ts). */
  aliases?: Readonly<Record<string, string>>
  /** Parameters holding a session id, where a page URL is accepted too (default: `sessionId`). */
  sessionKeys?: readonly string[]
  handler: (args: z.output<I>, ctx: ToolContext) => Promise<z.input<O>> | z.input<O>
  /** The text part of a result (default: the same JSON, compact). */
  render?: (result: z.output<O>) => string
  /** Content blocks for the result instead of the text part (images, audio, embedded resources …). */
  content?: (result: z.output<O>, ctx: ToolContext, args: z.output<I>) => ContentBlock[] | Promise<ContentBlock[]>
}

/**
 * How a wait runs as a stateless task: each poll calls `polls` (without waiting) with the arguments
 * fixed when the task was created, until its answer is not a timeout or the deadline passes.
 */
export interface WaitTask {
  /** The wait a poll calls (default: the tool itself). `ask` posts its question once, then its polls await the reply. */
  polls?: string
  /** The arguments a poll calls with, from the call's (without `timeoutMs`) and its first answer (default: the call's). */
  fixed?: (args: Readonly<Record<string, unknown>>, first: Readonly<Record<string, unknown>>) => Record<string, unknown>
  /** What a working task says it waits for, from its fixed arguments ("Waiting for annotations in session s_1"). */
  waitingFor?: (args: Readonly<Record<string, unknown>>) => string
}

/** A wait's task as declared on its definition, with the defaults filled in; undefined for a tool that does not wait. */
export function waitTaskOf(tool: Pick<ToolDefinition, 'name' | 'listening'> | undefined): Required<WaitTask> | undefined {
  if (!tool?.listening) return undefined
  const declared = tool.listening === true ? {} : tool.listening
  return {
    polls: declared.polls ?? tool.name,
    fixed: declared.fixed ?? ((args) => ({ ...args })),
    waitingFor: declared.waitingFor ?? (() => 'Waiting for the person'),
  }
}

/** Keeps each tool's handler typed against its own schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition
}

/**
 * A plugin tool in the shape most MCP and agent frameworks use. `inputSchema` may be a zod
 * object, a zod raw shape (`{ city: z.string() }`) or a JSON Schema object; `title` defaults from
 * the name; without `outputSchema` the result is any object, and tools/list lists no output schema.
 */
export interface CommonTool {
  name: string
  description: string
  inputSchema: z.ZodObject | Readonly<Record<string, z.ZodType>> | Readonly<Record<string, unknown>>
  handler: (args: Record<string, unknown>, ctx: ToolContext) => Promise<Record<string, unknown>> | Record<string, unknown>
  title?: string
  outputSchema?: z.ZodObject
  annotations?: ToolAnnotations
}

/** `get_weather` → `Get weather`. */
export function titleFromName(name: string): string {
  const words = String(name).replace(/[_-]+/g, ' ').trim()
  return words.length === 0 ? String(name) : words[0]!.toUpperCase() + words.slice(1)
}

/** A tool in either shape as a ToolDefinition (a ToolDefinition is returned as is). */
export function toToolDefinition(tool: ToolDefinition | CommonTool): ToolDefinition {
  if (!tool || typeof tool !== 'object' || !('inputSchema' in tool) || 'input' in tool) return tool as ToolDefinition
  const { inputSchema, outputSchema, title, annotations, handler, name, description } = tool
  return {
    name,
    title: title ?? titleFromName(name),
    description,
    input: inputOf(inputSchema, name),
    output: outputSchema ?? zod.looseObject({}),
    ...(outputSchema === undefined ? { listOutput: false } : {}),
    annotations: annotations ?? {},
    handler: handler as ToolDefinition['handler'],
  }
}

function inputOf(schema: CommonTool['inputSchema'], name: string): z.ZodObject {
  if (schema instanceof zod.ZodObject) return schema
  const values = Object.values(schema)
  if (values.length > 0 && values.every((v) => v instanceof zod.ZodType)) return zod.object(schema as Record<string, z.ZodType>)
  const fromJson = zod.fromJSONSchema(schema as Parameters<typeof zod.fromJSONSchema>[0])
  if (!(fromJson instanceof zod.ZodObject)) throw new Error(`Tool "${name}": inputSchema must describe an object (type: "object").`)
  // A declared dialect is kept, so tools/list publishes the schema as its author wrote it.
  const dialect = (schema as { $schema?: unknown }).$schema
  return typeof dialect === 'string' ? fromJson.meta({ $schema: dialect }) : fromJson
}
