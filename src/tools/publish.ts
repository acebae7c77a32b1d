/**
 * How a tool is published: its JSON Schemas as clients read them in tools/list, and its shape
 * for OpenAI-style function calling. Computed once per tool definition.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { BUILTIN_TOOLS } from './builtin.js'
import type { ToolDefinition } from './define.js'
import { ToolErrorSchema } from './result.js'

export type JsonSchema = Record<string, unknown>

export interface ToolInfo {
  name: string
  title: string
  description: string
  inputSchema: JsonSchema
  outputSchema: JsonSchema
  annotations: ToolAnnotations
}

/** A tool in the shape OpenAI-style function calling expects. */
export interface OpenAITool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
}

export function toOpenAITool(info: ToolInfo): OpenAITool {
  return { type: 'function', function: { name: info.name, description: info.description, parameters: withoutNulls(info.inputSchema) as JsonSchema } }
}

/** A deep copy without `null` values (dropped from objects and arrays) and without `$schema`. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null).map(withoutNulls)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key, v]) => v !== null && key !== '$schema')
        .map(([key, v]) => [key, withoutNulls(v)]),
    )
  }
  return value
}

/**
 * JSON Schemas of the built-in tools, computed at build time and inlined into the bundled CLI
 * (scripts/bundle.mjs), so a starting server does not spend ~30 ms converting zod schemas.
 * Absent when running from the unbundled sources: then they are computed here, once per tool.
 */
declare const __MARGINALIA_BUILTIN_SCHEMAS__: Record<string, { inputSchema: JsonSchema; outputSchema: JsonSchema }> | undefined
const PRECOMPUTED = typeof __MARGINALIA_BUILTIN_SCHEMAS__ === 'undefined' ? undefined : __MARGINALIA_BUILTIN_SCHEMAS__
const described = new WeakMap<ToolDefinition, ToolInfo>()

export function describeTool(tool: ToolDefinition): ToolInfo {
  let info = described.get(tool)
  if (!info) described.set(tool, (info = computeToolInfo(tool)))
  return info
}

function computeToolInfo(tool: ToolDefinition): ToolInfo {
  const precomputed = BUILTIN_TOOLS.includes(tool) ? PRECOMPUTED?.[tool.name] : undefined
  if (precomputed) {
    return { name: tool.name, title: tool.title, description: tool.description, ...precomputed, annotations: { title: tool.title, ...tool.annotations } }
  }
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    // Inputs keep their dialect ($schema: draft 2020-12, the MCP default) and $defs, as SEP-1613 asks.
    inputSchema: { ...z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override: plainDateTime }) },
    outputSchema: withErrorBranch(jsonSchema(tool.output, 'output')),
    annotations: { title: tool.title, ...tool.annotations },
  }
}

/**
 * A timestamp is published as `format: "date-time"` alone, without zod's 400-character regex
 * beside it: clients compile and run that regex for every timestamp of every result they
 * validate (a page of 100 summaries has 100). The server still checks timestamps with zod.
 */
function plainDateTime(ctx: { jsonSchema: Record<string, unknown> }): void {
  if (ctx.jsonSchema.format === 'date-time') delete ctx.jsonSchema.pattern
}

/**
 * Output schemas drop `$schema`: SDK clients compile them with a draft-07 Ajv, which cannot
 * resolve the 2020-12 meta-schema URI.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: plainDateTime }) as JsonSchema
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
