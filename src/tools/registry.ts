/**
 * The one list of tools. The stdio server, the HTTP MCP endpoint and in-process callers are
 * all built from a registry, so a tool is defined exactly once: name, title, description,
 * zod input and output schemas, annotations, handler.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import { ValidationError } from '../store/errors.js'
import type { ToolContext, ToolDefinition } from './define.js'
import { ToolErrorSchema, toToolError, type ToolError } from './result.js'
import { acknowledge, dismiss, getAllPending, getAnnotation, getPending, getSession, listSessions, reply, resolve } from './annotations.js'
import { DEFAULT_BYTE_BUDGET, MIN_BYTE_BUDGET } from './paging.js'
import { watchAnnotations } from './watch.js'
import { getChanges, watchChanges } from './changes.js'
import { ask, awaitReply } from './conversation.js'

/** The built-in tools, in the order they are listed. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  listSessions,
  getSession,
  getPending,
  getAllPending,
  getAnnotation,
  acknowledge,
  resolve,
  dismiss,
  reply,
  watchAnnotations,
  getChanges,
  watchChanges,
  ask,
  awaitReply,
]

export type JsonSchema = Record<string, unknown>

export interface ToolInfo {
  name: string
  title: string
  description: string
  inputSchema: JsonSchema
  outputSchema: JsonSchema
  annotations: ToolAnnotations
}

export type CallOutcome =
  | { ok: true; result: Record<string, unknown>; /** The text rendering of the result, for the text part. */ text: string }
  | { ok: false; error: ToolError }

export interface CallOptions {
  signal?: AbortSignal
  onProgress?: (progress: number, message?: string) => void
}

export interface RegistryOptions {
  /** The tools to expose (default: the built-in ones). */
  tools?: readonly ToolDefinition[]
  /** Check every result against its output schema (tests turn this on; it costs time on big lists). */
  validateOutput?: boolean
  /** No tool result may exceed this many bytes (default 256 KiB, at least 16 KiB). */
  byteBudget?: number
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>()
  private readonly infos: ToolInfo[]
  private readonly validateOutput: boolean
  private readonly byteBudget: number

  constructor(
    readonly store: Store,
    options: RegistryOptions = {},
  ) {
    for (const tool of options.tools ?? BUILTIN_TOOLS) {
      if (this.tools.has(tool.name)) throw new Error(`Duplicate tool name: ${tool.name}`)
      this.tools.set(tool.name, tool)
    }
    this.validateOutput = options.validateOutput ?? false
    this.byteBudget = options.byteBudget ?? DEFAULT_BYTE_BUDGET
    if (!Number.isInteger(this.byteBudget) || this.byteBudget < MIN_BYTE_BUDGET) {
      throw new ValidationError([{ path: 'byteBudget', message: `must be an integer of at least ${MIN_BYTE_BUDGET} bytes` }])
    }
    this.infos = [...this.tools.values()].map(describeTool)
  }

  /** Every exposed tool with its JSON Schemas. */
  list(): ToolInfo[] {
    return this.infos
  }

  names(): string[] {
    return [...this.tools.keys()]
  }

  has(name: string): boolean {
    return this.tools.has(name)
  }

  /** Call a tool. Never throws: failures come back as `{ ok: false, error: { code, message } }`. */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const tool = typeof name === 'string' ? this.tools.get(name) : undefined
    if (!tool) {
      return { ok: false, error: { code: 'UNKNOWN_TOOL', message: `Unknown tool "${String(name)}". Available tools: ${this.names().join(', ')}.` } }
    }
    const parsed = tool.input.safeParse(args ?? {})
    if (!parsed.success) return { ok: false, error: toToolError(ValidationError.fromZod(parsed.error, tool.name)) }
    const ctx: ToolContext = {
      store: this.store,
      signal: options.signal ?? new AbortController().signal,
      progress: (progress, message) => options.onProgress?.(progress, message),
      limits: { byteBudget: this.byteBudget },
    }
    try {
      const result = (await tool.handler(parsed.data, ctx)) as Record<string, unknown>
      if (this.validateOutput) {
        const checked = tool.output.safeParse(result)
        if (!checked.success) return { ok: false, error: { code: 'INTERNAL_ERROR', message: `${tool.name} produced output that does not match its schema: ${checked.error.message}` } }
      }
      return { ok: true, result, text: tool.render ? tool.render(result as never) : JSON.stringify(result) }
    } catch (thrown) {
      return { ok: false, error: toToolError(thrown) }
    }
  }
}

export function createToolRegistry(store: Store, options: RegistryOptions = {}): ToolRegistry {
  return new ToolRegistry(store, options)
}

function describeTool(tool: ToolDefinition): ToolInfo {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input'),
    outputSchema: withErrorBranch(jsonSchema(tool.output, 'output')),
    annotations: { title: tool.title, ...tool.annotations },
  }
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
  return rest
}

/**
 * A failed call carries `{ error: { code, message } }` as its structured content, and clients
 * validate structured content against the output schema even for errors. So the published
 * output schema accepts either the success shape or the error shape: the properties of both,
 * with `anyOf` over their required sets.
 */
function withErrorBranch(success: JsonSchema): JsonSchema {
  const properties = { ...(success.properties as Record<string, unknown>), error: jsonSchema(ToolErrorSchema, 'output') }
  const required = (success.required as string[] | undefined) ?? []
  const { required: _r, ...rest } = success
  return { ...rest, type: 'object', properties, anyOf: [{ required }, { required: ['error'] }] }
}
