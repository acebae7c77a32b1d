/** docs/reference/tools.md: every built-in MCP tool, from the registry's definitions and their zod schemas. */
import { z } from 'zod'
import { BUILTIN_TOOLS } from '../../src/tools/builtin.js'
import type { ToolDefinition } from '../../src/tools/define.js'
import { inProfile, PROFILE_SUMMARIES, TOOL_PROFILES } from '../../src/tools/policy.js'
import { describeTool, leanSchema } from '../../src/tools/publish.js'
import { TOOL_ERROR_CODES } from '../../src/tools/result.js'
import { code, fenced, page, table, type ReferencePage } from './markdown.js'

type Schema = Record<string, unknown>

/** A JSON Schema node as a short type: `string (1–128 chars)`, `"a" \| "b"`, `integer (1–500)`, `array of object`. */
export function typeText(schema: Schema, defs: Record<string, Schema> = {}): string {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace(/^#\/\$defs\//, '')
    return defs[name] ? typeText(defs[name], defs) : name
  }
  if ('const' in schema) return code(JSON.stringify(schema.const))
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => code(JSON.stringify(v))).join(' | ')
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
  if (union) return [...new Set(union.map((s) => typeText(s, defs)))].join(' | ')
  const type = schema.type
  if (Array.isArray(type)) return type.join(' | ')
  if (type === 'array') return `array of ${schema.items ? typeText(schema.items as Schema, defs) : 'anything'}${bounds(schema.minItems, schema.maxItems, ' items')}`
  if (type === 'string') return `string${schema.format ? ` (${String(schema.format)})` : ''}${bounds(schema.minLength, schema.maxLength, ' chars')}`
  if (type === 'integer' || type === 'number') return `${type}${bounds(schema.minimum, schema.maximum, '')}`
  return typeof type === 'string' ? type : 'any'
}

function bounds(min: unknown, max: unknown, unit: string): string {
  if (typeof min === 'number' && typeof max === 'number') return ` (${min}–${max}${unit})`
  if (typeof max === 'number') return ` (≤ ${max}${unit})`
  if (typeof min === 'number' && min > 0) return ` (≥ ${min}${unit})`
  return ''
}

/** Rows of a schema's top-level properties: name, type, required, description. */
function fields(schema: Schema): string[][] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const defs = (schema.$defs ?? {}) as Record<string, Schema>
  return Object.entries(properties).map(([name, p]) => [code(name), typeText(p, defs), required.has(name) ? 'yes' : '', typeof p.description === 'string' ? p.description : ''])
}

function hints(tool: ToolDefinition): string {
  const a = tool.annotations
  const words = [
    a.readOnlyHint ? 'read-only' : 'changes data',
    a.idempotentHint ? 'idempotent' : undefined,
    a.destructiveHint ? 'destructive' : undefined,
    tool.privileged ? 'privileged (exposed only when allowed by name, or under `full`)' : undefined,
    tool.listening ? 'waits for the person (the agent counts as listening meanwhile)' : undefined,
  ]
  return words.filter((w): w is string => w !== undefined).join(' · ')
}

function toolSection(tool: ToolDefinition): string {
  const input = leanSchema(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' })) as Schema
  const output = leanSchema(z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' })) as Schema
  const params = fields(input)
  const aliases = Object.entries(tool.aliases ?? {})
  return [
    `## ${tool.name}`,
    tool.description,
    `*${hints(tool)}.* Profiles: ${TOOL_PROFILES.filter((p) => inProfile(p, tool)).map(code).join(', ') || 'none (allow it by name)'}.`,
    params.length === 0 ? 'Parameters: none.' : ['Parameters:', '', table(['name', 'type', 'required', 'meaning'], params)].join('\n'),
    ...(aliases.length === 0 ? [] : [`Also accepted: ${aliases.map(([alias, name]) => `${code(alias)} for ${code(name)}`).join(', ')}.`]),
    ['Result (`structuredContent`):', '', table(['field', 'type', 'always', 'meaning'], fields(output))].join('\n'),
    ['<details><summary>Input schema as <code>tools/list</code> publishes it</summary>', '', fenced(JSON.stringify(describeTool(tool).inputSchema, null, 2), 'json'), '', '</details>'].join('\n'),
  ].join('\n\n')
}

export function toolsPage(): ReferencePage {
  return page(
    'docs/reference/tools.md',
    'Tools',
    'the tool registry (`src/tools/builtin.ts`), each tool\'s definition and zod schemas, and `src/tools/policy.ts`',
    [
      [
        'The MCP tools every Marginalia server exposes — `marginalia mcp` over stdio and `/mcp` of `marginalia serve` — in the order `tools/list` gives them.',
        'How they behave together (summaries, pages, byte budgets, waits, errors) is in the [agent guide](../guide/agents.md).',
      ].join(' '),
      table(
        ['tool', 'what it does', 'read-only'],
        BUILTIN_TOOLS.map((t) => [`[${code(t.name)}](#${t.name.replace(/[^a-z0-9_-]/g, '')})`, t.description.split(/(?<=\.)\s(?=[A-Z])/)[0]!, t.annotations.readOnlyHint ? 'yes' : '']),
      ),
      ['## Profiles', '', table(['profile', 'exposes'], TOOL_PROFILES.map((p) => [code(p), PROFILE_SUMMARIES[p]]))].join('\n'),
      `## Error codes\n\nA failed call is \`isError: true\` with the text \`CODE: message\` and \`_meta["marginalia/error"]\` = \`{ code, message, details? }\`, \`code\` one of: ${TOOL_ERROR_CODES.map(code).join(', ')}.`,
      ...BUILTIN_TOOLS.map(toolSection),
    ],
  )
}
