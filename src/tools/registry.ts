/**
 * The one list of tools. The stdio server, the HTTP MCP endpoint and in-process callers are
 * all built from a registry, so a tool is defined exactly once: name, title, description,
 * zod input and output schemas, annotations, handler.
 */
import { assertZod4Tool } from './zod-version.js'
import type { ContentBlock, ServerCapabilities } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import type { SourceOptions } from '../sources/options.js'
import { ValidationError, clipEcho } from '../store/errors.js'
import { DEFAULT_BYTE_BUDGET, MIN_BYTE_BUDGET } from '../views/page.js'
import { PACKAGE_NAME, VERSION } from '../version.js'
import { BUILTIN_TOOLS } from './builtin.js'
import { toToolDefinition, type CommonTool, type McpCallContext, type ToolContext, type ToolDefinition } from './define.js'
import { resolveAppTools, resolveToolPolicy, type ToolPolicy, type ToolProfile } from './policy.js'
import { describeTool, toOpenAIResponsesTool, toOpenAITool, type OpenAIResponsesTool, type OpenAITool, type OpenAIToolsOptions, type ToolInfo } from './publish.js'
import { toToolError, type ToolError } from './result.js'
import { prepareArgs } from './inputs.js'
import { BURST_MAX_MS, BURST_QUIET_MS } from './watch.js'
import { DEFAULT_MAX_WAIT_MS } from './wait.js'
import { MAX_WATCH_TIMEOUT_MS } from '../store/watch.js'

/**
 * The MCP SDK's LATEST_PROTOCOL_VERSION (test/unit/tools/registry.test.ts holds them equal), named here
 * so the registry loads without the SDK: the HTTP server then loads the SDK only with its first
 * MCP request.
 */
export const LATEST_PROTOCOL_VERSION = '2025-11-25'

export { BUILTIN_TOOLS } from './builtin.js'
export type { JsonSchema, OpenAIResponsesTool, OpenAITool, OpenAIToolsOptions, ToolInfo } from './publish.js'

/** A tool call as an OpenAI model emits it (Chat Completions `tool_calls[i]`). */
export interface OpenAIToolCall {
  id: string
  type?: 'function'
  function: { name: string; arguments: string | Record<string, unknown> }
}

/** The message that answers a tool call. */
export interface OpenAIToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

/**
 * What every Marginalia MCP server declares. createServer builds its server from this, and
 * serverInfo() reports it, so the two cannot drift apart.
 */
const SERVER_CAPABILITIES = {
  logging: {},
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
} as const satisfies ServerCapabilities

/** Tool names that every client accepts: MCP allows more, OpenAI function names allow exactly this. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

export type CallOutcome =
  | {
      ok: true
      result: Record<string, unknown>
      /** The text rendering of the result, for the text part. */
      text: string
      /** Content blocks to send instead of the text part (tools that define `content`). */
      content?: ContentBlock[]
    }
  | { ok: false; error: ToolError }

export interface CallOptions {
  signal?: AbortSignal
  onProgress?: (progress: number, message?: string) => void
  /** The MCP side of the call, when it came over MCP (handed to the tool as `ctx.mcp`). */
  mcp?: McpCallContext
  /** Wait at most this long in this call (below the server's maximum; 0: answer as things stand now). */
  maxWaitMs?: number
  /** This call is a task's poll of its wait (with maxWaitMs 0), whose deadline is this epoch ms. */
  pollDeadline?: number
}

/**
 * One call of a batch: a tool name and its arguments (default `{}`), as `arguments` (the MCP and
 * OpenAI shape; a JSON string too, as OpenAI sends it) or `args`.
 */
export interface BatchCall {
  name: string
  arguments?: unknown
  args?: unknown
}

export interface ServerInfo {
  name: string
  title: string
  version: string
  /** The newest MCP protocol version this server speaks (it negotiates older ones too). */
  protocolVersion: string
  capabilities: ServerCapabilities
  profile: ToolProfile
  /** The exposed tools, in listing order. */
  tools: string[]
  /** The inbox app's tools the policy lets a client that renders apps call (listed to such clients only; see tools/inbox-app.ts). */
  appTools: string[]
}

/**
 * What a transport serves: the tool listing and the calls. A ToolRegistry is one; a wrapper that
 * adds behaviour around calls holds a registry and is another (`serve` reports each call to the
 * agent's presence that way).
 */
export interface ToolService {
  /** Every exposed tool with its JSON Schemas, in listing order. */
  list(): ToolInfo[]
  serverInfo(): ServerInfo
  /** Never throws: failures come back as `{ ok: false, error }`. */
  call(name: string, args: unknown, options?: CallOptions): Promise<CallOutcome>
}

export interface RegistryOptions extends ToolPolicy {
  /** The tool catalogue (default: the built-in tools). Plugins are added to it. */
  tools?: readonly ToolDefinition[]
  /**
   * An embedder's own tools: listed after the built-in ones and filtered by the same policy. A
   * ToolDefinition, or the common `{ name, description, inputSchema, handler, title?, outputSchema? }`.
   */
  plugins?: readonly (ToolDefinition | CommonTool)[]
  /** Check every result against its output schema (tests turn this on; it costs time on big lists). */
  validateOutput?: boolean
  /** No tool result may exceed this many bytes (default 80 KiB, at least 16 KiB). */
  byteBudget?: number
  /** Server name reported to clients (default: marginalia). */
  name?: string
  /**
   * watch_annotations lets a burst settle: it answers once no annotation arrived for this many
   * ms (default 250, bounded at 1 s after the first; 0 answers at the first one).
   */
  burstSettleMs?: number
  /**
   * No wait (watch_annotations, watch_changes, ask, await_reply) lasts longer than this many ms
   * (default 55 000: under the 60 s request timeout of the official SDK clients). A longer
   * timeoutMs is clamped, and the answer says how to continue.
   */
  maxWaitMs?: number
  /** The app's source (project root, manifest, editor), handed to every tool call as `ctx.sources`. */
  sources?: SourceOptions
}

export class ToolRegistry implements ToolService {
  /** Every known tool (built-in and plugin), exposed or not. */
  private readonly catalogue = new Map<string, ToolDefinition>()
  /** The tools the policy exposes: the only ones listed and callable. */
  private readonly tools = new Map<string, ToolDefinition>()
  private readonly infos: ToolInfo[]
  private readonly validateOutput: boolean
  private readonly byteBudget: number
  private readonly burstSettleMs: number
  private readonly maxWaitMs: number
  private readonly sources: SourceOptions | undefined
  private readonly serverName: string
  private readonly appTools: string[]
  readonly profile: ToolProfile

  constructor(
    readonly store: Store,
    options: RegistryOptions = {},
  ) {
    for (const plugin of options.plugins ?? []) assertZod4Tool(plugin)
    for (const tool of [...(options.tools ?? BUILTIN_TOOLS), ...(options.plugins ?? []).map(toToolDefinition)]) {
      checkDefinition(tool)
      if (this.catalogue.has(tool.name)) throw new Error(`Duplicate tool name: ${tool.name} (every tool, plugin tools included, needs its own name)`)
      this.catalogue.set(tool.name, tool)
    }
    this.profile = options.profile ?? 'default'
    for (const tool of resolveToolPolicy([...this.catalogue.values()], options)) this.tools.set(tool.name, tool)
    this.validateOutput = options.validateOutput ?? false
    this.byteBudget = options.byteBudget ?? DEFAULT_BYTE_BUDGET
    if (!Number.isInteger(this.byteBudget) || this.byteBudget < MIN_BYTE_BUDGET) {
      throw new ValidationError([{ path: 'byteBudget', message: `must be an integer of at least ${MIN_BYTE_BUDGET} bytes` }])
    }
    this.burstSettleMs = options.burstSettleMs ?? BURST_QUIET_MS
    if (!Number.isInteger(this.burstSettleMs) || this.burstSettleMs < 0 || this.burstSettleMs > BURST_MAX_MS) {
      throw new ValidationError([{ path: 'burstSettleMs', message: `must be a whole number of ms from 0 to ${BURST_MAX_MS}` }])
    }
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS
    if (!Number.isInteger(this.maxWaitMs) || this.maxWaitMs < 1 || this.maxWaitMs > MAX_WATCH_TIMEOUT_MS) {
      throw new ValidationError([{ path: 'maxWaitMs', message: `must be a whole number of ms from 1 to ${MAX_WATCH_TIMEOUT_MS}` }])
    }
    this.serverName = options.name ?? PACKAGE_NAME
    this.sources = options.sources
    this.infos = [...this.tools.values()].map(describeTool)
    this.appTools = resolveAppTools(this.names(), options)
  }

  /** Every exposed tool with its JSON Schemas. */
  list(): ToolInfo[] {
    return this.infos
  }

  /** The exposed tool names, in listing order. */
  names(): string[] {
    return [...this.tools.keys()]
  }

  has(name: string): boolean {
    return this.tools.has(name)
  }

  /** The definition of an exposed tool (undefined for any other name). */
  tool(name: string): ToolDefinition | undefined {
    return this.tools.get(name)
  }

  /** Call an exposed tool. Never throws: failures come back as `{ ok: false, error: { code, message } }`. */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const tool = typeof name === 'string' ? this.tools.get(name) : undefined
    if (!tool) return { ok: false, error: this.unknownTool(name) }
    const prepared = prepareArgs(tool.input, args, {
      tool: tool.name,
      ...(tool.aliases ? { aliases: tool.aliases } : {}),
      sessionKeys: tool.sessionKeys ?? ['sessionId'],
      resolveUrl: (url) => sessionForUrl(this.store, url),
    })
    if (prepared instanceof ValidationError) return { ok: false, error: toToolError(prepared) }
    const parsed = tool.input.safeParse(prepared)
    if (!parsed.success) return { ok: false, error: toToolError(ValidationError.fromZod(parsed.error, tool.name)) }
    const ctx: ToolContext = {
      store: this.store,
      signal: options.signal ?? new AbortController().signal,
      progress: (progress, message) => options.onProgress?.(progress, message),
      limits: { byteBudget: this.byteBudget, burstSettleMs: this.burstSettleMs, maxWaitMs: Math.min(options.maxWaitMs ?? this.maxWaitMs, this.maxWaitMs) },
      ...(this.sources ? { sources: this.sources } : {}),
      ...(options.mcp ? { mcp: options.mcp } : {}),
    }
    try {
      const catchingUp = this.store.catchUp() // read-after-write: see what other processes wrote first
      if (catchingUp) await catchingUp
      const result = (await tool.handler(parsed.data, ctx)) as Record<string, unknown>
      if (this.validateOutput) {
        const checked = tool.output.safeParse(result)
        if (!checked.success) return { ok: false, error: { code: 'INTERNAL_ERROR', message: `${tool.name} produced output that does not match its schema: ${checked.error.message}` } }
      }
      const text = tool.render ? tool.render(result as never) : JSON.stringify(result)
      return tool.content ? { ok: true, result, text, content: await tool.content(result as never, ctx, parsed.data as never) } : { ok: true, result, text }
    } catch (thrown) {
      return { ok: false, error: toToolError(thrown) }
    }
  }

  /**
   * Run calls one after another, in order. One outcome per call, in the same order; a failed
   * call keeps its slot and the rest still run. Never throws.
   */
  async callBatch(calls: readonly BatchCall[], options: CallOptions = {}): Promise<CallOutcome[]> {
    const outcomes: CallOutcome[] = []
    // `?.`: an in-process caller may pass anything; a malformed slot fails on its own.
    for (const call of calls) outcomes.push(await this.call(call?.name, call?.arguments ?? call?.args, options))
    return outcomes
  }

  /**
   * The exposed tools for OpenAI-style function calling: the input JSON Schema as `parameters`.
   * `{ strict: true }` makes them strict function tools (optional parameters nullable; a `null`
   * argument means absent); `format: 'responses'` gives the Responses API's flat shape.
   */
  toOpenAITools(options?: OpenAIToolsOptions & { format?: 'chat' }): OpenAITool[]
  toOpenAITools(options: OpenAIToolsOptions & { format: 'responses' }): OpenAIResponsesTool[]
  toOpenAITools(options: OpenAIToolsOptions = {}): OpenAITool[] | OpenAIResponsesTool[] {
    const strict = options.strict ?? false
    return options.format === 'responses' ? this.infos.map((i) => toOpenAIResponsesTool(i, strict)) : this.infos.map((i) => toOpenAITool(i, strict))
  }

  /**
   * Run one OpenAI-style tool call (`{ id, function: { name, arguments } }`, arguments as the
   * JSON string the model produced) and return the tool message to append to the conversation.
   * Never throws: a failure comes back as the message content `CODE: message`.
   */
  async runOpenAIToolCall(call: OpenAIToolCall, options: CallOptions = {}): Promise<OpenAIToolMessage> {
    const outcome = await this.call(call?.function?.name, call?.function?.arguments, options)
    return { role: 'tool', tool_call_id: call?.id, content: outcome.ok ? outcome.text : `${outcome.error.code}: ${outcome.error.message}` }
  }

  /** Who this server is and what it offers, as an MCP client would learn it on initialize. */
  serverInfo(): ServerInfo {
    return {
      name: this.serverName,
      title: 'Marginalia',
      version: VERSION,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: structuredClone(SERVER_CAPABILITIES) as ServerCapabilities,
      profile: this.profile,
      tools: this.names(),
      appTools: [...this.appTools],
    }
  }

  private unknownTool(name: unknown): ToolError {
    const available = this.names()
    const listed = `Available tools: ${available.length > 0 ? available.join(', ') : '(none)'}.`
    const shown = typeof name === 'string' ? `"${clipEcho(name)}"` : `(${name === undefined ? 'no name' : typeof name})`
    const message =
      typeof name === 'string' && this.catalogue.has(name)
        ? `Tool ${shown} is not available on this server (tool profile "${this.profile}" and its allow/deny lists do not expose it). ${listed}`
        : `Unknown tool ${shown}. ${listed}`
    return { code: 'UNKNOWN_TOOL', message, details: typeof name === 'string' ? { tool: clipEcho(name), available } : { available } }
  }
}

/** The session of a page: exact url first, then ignoring a trailing slash, query and hash. */
function sessionForUrl(store: Store, url: string): string | undefined {
  const sessions = store.listSessions()
  const bare = (u: string) => u.replace(/[?#].*$/, '').replace(/\/+$/, '')
  return (sessions.findLast((s) => s.url === url) ?? sessions.findLast((s) => bare(s.url) === bare(url)))?.id
}

export function createToolRegistry(store: Store, options: RegistryOptions = {}): ToolRegistry {
  return new ToolRegistry(store, options)
}

function checkDefinition(tool: ToolDefinition): void {
  const name = typeof tool?.name === 'string' ? tool.name : String(tool?.name)
  if (!TOOL_NAME.test(name)) throw new Error(`Tool name "${name}" is invalid: use 1–64 letters, digits, "_" or "-".`)
  if (typeof tool.description !== 'string' || tool.description.trim() === '') throw new Error(`Tool "${name}" needs a non-empty description.`)
  if (tool.title !== undefined && (typeof tool.title !== 'string' || tool.title.trim() === '')) throw new Error(`Tool "${name}": title, when given, must be non-empty (leave it out to derive it from the name).`)
  if (!(tool.input instanceof z.ZodObject)) throw new Error(`Tool "${name}": input must be a zod object schema.`)
  if (!(tool.output instanceof z.ZodObject)) throw new Error(`Tool "${name}": output must be a zod object schema.`)
  if (typeof tool.handler !== 'function') throw new Error(`Tool "${name}" needs a handler function.`)
}
