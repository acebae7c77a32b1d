/**
 * How a tool is published: its JSON Schemas as clients read them in tools/list, and its shape
 * for OpenAI-style function calling. Computed once per tool definition.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { BUILTIN_TOOLS } from './builtin.js'
import { titleFromName, type ToolDefinition } from './define.js'

export type JsonSchema = Record<string, unknown>

export interface ToolInfo {
  name: string
  /** For people; from the name when the tool has none of its own. tools/list carries it only when it says more than the name. */
  title: string
  description: string
  inputSchema: JsonSchema
  /** Absent for a tool that lists none (ToolDefinition.listOutput): its answer is its text, or any object. */
  outputSchema?: JsonSchema
  annotations: ToolAnnotations
  /** Listed as the tool's `_meta` (the MCP App a host may render beside its result). */
  _meta?: Record<string, unknown>
  /** The definition's `showsInApp`: the inbox app is linked to its results. Not listed itself. */
  showsInApp?: boolean
}

/** A tool in the shape OpenAI's Chat Completions function calling expects. */
export interface OpenAITool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean }
}

/** A tool in the shape OpenAI's Responses API expects (flat). */
export interface OpenAIResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: JsonSchema
  strict: boolean
}

export interface OpenAIToolsOptions {
  /**
   * Strict function calling: every parameter is listed as required, optional ones accept `null`
   * (which the registry reads as absent), no additional properties, only keywords strict mode
   * supports. Default false.
   */
  strict?: boolean
  /** `chat` (default): `{ type, function: { … } }`; `responses`: the Responses API's flat `{ type, name, … }`. */
  format?: 'chat' | 'responses'
}

export function toOpenAITool(info: ToolInfo, strict = false): OpenAITool {
  const parameters = { properties: {}, ...(withoutNulls(info.inputSchema) as JsonSchema) } // OpenAI wants `properties`, empty or not
  return strict
    ? { type: 'function', function: { name: info.name, description: info.description, parameters: strictParameters(parameters), strict: true } }
    : { type: 'function', function: { name: info.name, description: info.description, parameters: { ...parameters, additionalProperties: false } } }
}

export function toOpenAIResponsesTool(info: ToolInfo, strict = false): OpenAIResponsesTool {
  const { function: f } = toOpenAITool(info, strict)
  return { type: 'function', name: f.name, description: f.description, parameters: f.parameters, strict }
}

/** Keywords OpenAI's strict mode does not take on parameters (the registry still checks them). */
const NOT_STRICT = new Set(['minLength', 'maxLength', 'format', 'pattern', 'default'])

/**
 * Parameters for strict mode: all properties required, the optional ones nullable (`null` means
 * absent to the registry), `additionalProperties: false`.
 */
function strictParameters(schema: JsonSchema): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const strictProps = Object.fromEntries(
    Object.entries(properties).map(([key, prop]) => {
      const plain = Object.fromEntries(Object.entries(prop).filter(([k]) => !NOT_STRICT.has(k))) as JsonSchema
      return [key, required.has(key) ? plain : nullable(plain)]
    }),
  )
  return { type: 'object', properties: strictProps, required: Object.keys(properties), additionalProperties: false }
}

function nullable(schema: JsonSchema): JsonSchema {
  const { description, ...rest } = schema
  const type = rest.type
  if (typeof type === 'string') {
    const out: JsonSchema = { ...rest, type: [type, 'null'] }
    if (Array.isArray(rest.enum)) out.enum = [...(rest.enum as unknown[]), null]
    return description === undefined ? out : { ...out, description }
  }
  return { anyOf: [rest, { type: 'null' }], ...(description === undefined ? {} : { description }) }
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
declare const __MARGINALIA_BUILTIN_SCHEMAS__: Record<string, { inputSchema: JsonSchema; outputSchema?: JsonSchema }> | undefined
const PRECOMPUTED = typeof __MARGINALIA_BUILTIN_SCHEMAS__ === 'undefined' ? undefined : __MARGINALIA_BUILTIN_SCHEMAS__
const described = new WeakMap<ToolDefinition, ToolInfo>()

export function describeTool(tool: ToolDefinition): ToolInfo {
  let info = described.get(tool)
  if (!info) described.set(tool, (info = computeToolInfo(tool)))
  return info
}

function computeToolInfo(tool: ToolDefinition): ToolInfo {
  const title = tool.title ?? titleFromName(tool.name)
  const precomputed = BUILTIN_TOOLS.includes(tool) ? PRECOMPUTED?.[tool.name] : undefined
  if (precomputed) {
    const { inputSchema, outputSchema } = precomputed
    return { name: tool.name, title, description: tool.description, inputSchema, ...(outputSchema ? { outputSchema } : {}), annotations: leanAnnotations(tool.annotations), ...(tool.showsInApp ? { showsInApp: true } : {}) }
  }
  return {
    name: tool.name,
    title,
    description: tool.description,
    inputSchema: declaredDialect(tool.input) === undefined ? leanInput(jsonSchema(tool.input, 'input')) : exactInput(tool.input),
    // Success shape only: a failure is an `isError` result without structured content, so no client validates it.
    ...(tool.listOutput === false ? {} : { outputSchema: outlineSchema(jsonSchema(tool.output, 'output')) as JsonSchema }),
    annotations: leanAnnotations(tool.annotations),
    ...(tool.showsInApp ? { showsInApp: true } : {}),
  }
}

/**
 * Hints as listed: without a `title` (the tool's own `title` says it; a client too old to read it
 * shows the name) and without the hints that say nothing: `readOnlyHint: false` and
 * `idempotentHint: false` are the defaults, and the destructive and idempotent hints mean
 * something only for a tool that is not read-only. `openWorldHint: false` stays: its default is true.
 */
function leanAnnotations(annotations: ToolAnnotations): ToolAnnotations {
  const { title: _title, ...hints } = annotations
  if (hints.readOnlyHint === true) {
    delete hints.destructiveHint
    delete hints.idempotentHint
  } else {
    delete hints.readOnlyHint
    if (hints.idempotentHint === false) delete hints.idempotentHint
  }
  return hints
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
 * A tool schema as the model reads it: no `$schema` (SDK clients compile with a draft-07 Ajv, and
 * the dialect is MCP's default anyway), schemas used more than once as shared `$defs`, and none of
 * the words that say nothing (see {@link leanSchema}).
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: plainDateTime }) as JsonSchema
  return leanSchema(rest) as JsonSchema
}

const JS_SAFE_BOUNDS: Readonly<Record<string, number>> = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }

/**
 * Drops what only restates JavaScript (integer bounds at ±2^53−1), and turns an empty
 * `additionalProperties: {}` (any value, but without a keyword that says so) into `true`.
 */
export function leanSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(leanSchema)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (key in JS_SAFE_BOUNDS && v === JS_SAFE_BOUNDS[key]) continue
    if (key === 'additionalProperties' && typeof v === 'object' && v !== null && Object.keys(v).length === 0) {
      out[key] = true
      continue
    }
    if (key === 'propertyNames' && typeof v === 'object' && v !== null && JSON.stringify(v) === '{"type":"string"}') continue
    out[key] = leanSchema(v)
  }
  return out
}

/** Keywords an output schema keeps: the shape (types, fields, enums), not the limits the server enforces on input. */
const OUTLINE_KEYWORDS = new Set(['type', 'properties', 'items', 'enum', 'anyOf', 'oneOf', 'const', 'additionalProperties'])
/** Below this depth an output object is published as `{ type: "object" }`: a client learns the shape of a result, not of every nested record. */
const OUTLINE_DEPTH = 1

/**
 * An output schema as an outline of the success shape: types, fields and enums of the top-level
 * fields (nested records are `{ type: "object" }`, an array of them `{ type: "array" }`). A field
 * marked `.meta({ listed: false })` is left out: bookkeeping that the request, another field or the
 * text already says (the id asked with; a page's count is its array's length; what was cut to fit
 * the byte budget, the text and nextCursor say). The result still carries it, and validates: an outline requires no field and
 * allows any other. What the server produces is still checked against the full zod schema in tests
 * (`validateOutput`).
 */
function outlineSchema(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => outlineSchema(v, depth))
  if (typeof value !== 'object' || value === null) return value
  const schema = value as Record<string, unknown>
  if (schema.type === 'object' && depth >= OUTLINE_DEPTH) return { type: 'object' }
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(schema)) {
    if (!OUTLINE_KEYWORDS.has(key) || (key === 'type' && 'const' in schema)) continue // a const says its type
    if (key === 'properties') {
      const listed = Object.entries(v as Record<string, Record<string, unknown>>).filter(([, p]) => p.listed !== false)
      out[key] = Object.fromEntries(listed.map(([k, p]) => [k, outlineSchema(p, depth + 1)]))
    } else if (key === 'additionalProperties') { if (v !== false) out[key] = outlineSchema(v, depth + 1) }
    else if (key === 'items') {
      const items = outlineSchema(v, depth)
      if (JSON.stringify(items) !== '{"type":"object"}') out[key] = items // "records" adds nothing a client can check
    }
    else if (key === 'anyOf' || key === 'oneOf') {
      // Alternatives that outline the same (two kinds of record, both `{ type: "object" }`) are one.
      const alternatives = [...new Map((v as unknown[]).map((a) => outlineSchema(a, depth)).map((a) => [JSON.stringify(a), a])).values()]
      if (alternatives.length === 1) Object.assign(out, alternatives[0])
      else out[key] = alternatives
    } else out[key] = v
  }
  return out
}

/** Input keywords left out of tools/list: maximum lengths, which the server checks and explains in its error anyway. */
const INPUT_OMITTED = new Set(['maxLength'])

/**
 * `minLength: 1` is left out too: the ids and cursors a model copies from an earlier answer, and
 * the texts it writes (a reply, a summary, a reason, a question), which the store wants with more
 * than whitespace anyway, a rule JSON Schema cannot say: the server refuses an empty one with an
 * error naming the field. Other minimum lengths stay.
 */
const omittedInput = (key: string, v: unknown): boolean => (INPUT_OMITTED.has(key) && typeof v === 'number') || (key === 'minLength' && v === 1)

/**
 * An input schema without `maxLength` nor `minLength: 1`, and without `additionalProperties: false` at the top: the
 * registry accepts common aliases of parameter names (tools/inputs.ts), and refuses any other
 * unknown key itself with a "did you mean". `toOpenAITools({ strict: true })` puts it back.
 */
/**
 * The JSON Schema dialect a tool's author declared on its input (`.meta({ $schema })`), if any. Such
 * a schema is published as written (SEP-1613: `$schema`, `$defs` and `additionalProperties` kept),
 * not leaned: its author asked for that dialect's exact reading.
 */
function declaredDialect(schema: z.ZodType): string | undefined {
  const declared = z.globalRegistry.get(schema)?.$schema
  return typeof declared === 'string' ? declared : undefined
}

function exactInput(schema: z.ZodType): JsonSchema {
  const { $schema: _generated, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override: plainDateTime }) as JsonSchema
  return { $schema: declaredDialect(schema), ...(leanSchema(rest) as JsonSchema) }
}

function leanInput(schema: JsonSchema): JsonSchema {
  const { additionalProperties, ...rest } = leanKeywords(schema) as JsonSchema
  if (typeof rest.properties === 'object' && rest.properties !== null && Object.keys(rest.properties).length === 0) delete rest.properties // no parameters: `{ type: "object" }` says it
  return additionalProperties === false ? rest : { ...rest, ...(additionalProperties === undefined ? {} : { additionalProperties }) }
}

function leanKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(leanKeywords)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !omittedInput(key, v))
      .map(([key, v]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([k, p]) => [k, leanKeywords(p)])) : leanKeywords(v)]),
  )
}
