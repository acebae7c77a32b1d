/**
 * The one list of tools. The stdio server, the HTTP MCP endpoint and in-process callers are
 * all built from a registry, so a tool is defined exactly once: name, title, description,
 * zod input and output schemas, annotations, handler.
 */
import { LATEST_PROTOCOL_VERSION, type ContentBlock, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import { ValidationError, clipEcho } from '../store/errors.js'
import { DEFAULT_BYTE_BUDGET, MIN_BYTE_BUDGET } from '../views/page.js'
import { PACKAGE_NAME, VERSION } from '../version.js'
import { BUILTIN_TOOLS } from './builtin.js'
import type { McpCallContext, ToolContext, ToolDefinition } from './define.js'
import { resolveToolPolicy, type ToolPolicy, type ToolProfile } from './policy.js'
import { describeTool, toOpenAITool, type OpenAITool, type ToolInfo } from './publish.js'
import { toToolError, type ToolError } from './result.js'

export { BUILTIN_TOOLS } from './builtin.js'
export type { JsonSchema, OpenAITool, ToolInfo } from './publish.js'

/**
 * What every Marginalia MCP server declares. createServer builds its server from this, and
 * serverInfo() reports it, so the two cannot drift apart.
 */
export const SERVER_CAPABILITIES = {
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
}

/** One call of a batch: a tool name and its arguments (default `{}`). */
export interface BatchCall {
  name: string
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
  /** An embedder's own tools: listed after the built-in ones and filtered by the same policy. */
  plugins?: readonly ToolDefinition[]
  /** Check every result against its output schema (tests turn this on; it costs time on big lists). */
  validateOutput?: boolean
  /** No tool result may exceed this many bytes (default 256 KiB, at least 16 KiB). */
  byteBudget?: number
  /** Server name reported to clients (default: marginalia). */
  name?: string
}

export class ToolRegistry implements ToolService {
  /** Every known tool (built-in and plugin), exposed or not. */
  private readonly catalogue = new Map<string, ToolDefinition>()
  /** The tools the policy exposes: the only ones listed and callable. */
  private readonly tools = new Map<string, ToolDefinition>()
  private readonly infos: ToolInfo[]
  private readonly validateOutput: boolean
  private readonly byteBudget: number
  private readonly serverName: string
  readonly profile: ToolProfile

  constructor(
    readonly store: Store,
    options: RegistryOptions = {},
  ) {
    for (const tool of [...(options.tools ?? BUILTIN_TOOLS), ...(options.plugins ?? [])]) {
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
    this.serverName = options.name ?? PACKAGE_NAME
    this.infos = [...this.tools.values()].map(describeTool)
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
    const parsed = tool.input.safeParse(args ?? {})
    if (!parsed.success) return { ok: false, error: toToolError(ValidationError.fromZod(parsed.error, tool.name)) }
    const ctx: ToolContext = {
      store: this.store,
      signal: options.signal ?? new AbortController().signal,
      progress: (progress, message) => options.onProgress?.(progress, message),
      limits: { byteBudget: this.byteBudget },
      ...(options.mcp ? { mcp: options.mcp } : {}),
    }
    try {
      const result = (await tool.handler(parsed.data, ctx)) as Record<string, unknown>
      if (this.validateOutput) {
        const checked = tool.output.safeParse(result)
        if (!checked.success) return { ok: false, error: { code: 'INTERNAL_ERROR', message: `${tool.name} produced output that does not match its schema: ${checked.error.message}` } }
      }
      const text = tool.render ? tool.render(result as never) : JSON.stringify(result)
      return tool.content ? { ok: true, result, text, content: tool.content(result as never) } : { ok: true, result, text }
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
    for (const call of calls) outcomes.push(await this.call(call?.name, call?.args, options))
    return outcomes
  }

  /**
   * The exposed tools for OpenAI-style function calling: the input JSON Schema as
   * `parameters` (an object schema, without `$schema` and without any `null` value).
   */
  toOpenAITools(): OpenAITool[] {
    return this.infos.map(toOpenAITool)
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

export function createToolRegistry(store: Store, options: RegistryOptions = {}): ToolRegistry {
  return new ToolRegistry(store, options)
}

function checkDefinition(tool: ToolDefinition): void {
  const name = typeof tool?.name === 'string' ? tool.name : String(tool?.name)
  if (!TOOL_NAME.test(name)) throw new Error(`Tool name "${name}" is invalid: use 1–64 letters, digits, "_" or "-".`)
  for (const field of ['title', 'description'] as const) {
    if (typeof tool[field] !== 'string' || tool[field].trim() === '') throw new Error(`Tool "${name}" needs a non-empty ${field}.`)
  }
  if (!(tool.input instanceof z.ZodObject)) throw new Error(`Tool "${name}": input must be a zod object schema.`)
  if (!(tool.output instanceof z.ZodObject)) throw new Error(`Tool "${name}": output must be a zod object schema.`)
  if (typeof tool.handler !== 'function') throw new Error(`Tool "${name}" needs a handler function.`)
}
