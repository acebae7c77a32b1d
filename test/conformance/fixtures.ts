/**
 * The MCP conformance suite's `test_*` fixtures, built the way an embedder extends Marginalia:
 * tools as registry plugins (content blocks, logging, progress, sampling and elicitation through
 * `ctx.mcp`), resources and prompts through `startHttpServer`'s `extendServer` hook.
 * Test-only: never part of the shipped product.
 */
import { completable, ResourceTemplate, type ContentBlock, type McpServer } from '@modelcontextprotocol/server'
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/core'
import { z } from 'zod'
import { defineTool, type ToolContext, type ToolDefinition } from '../../src/index.js'

// A 1×1 PNG and a minimal WAV file.
const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='

const Empty = z.strictObject({})
const Text = z.object({ text: z.string() })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function mcpOf(ctx: ToolContext): NonNullable<ToolContext['mcp']> {
  if (!ctx.mcp) throw new Error('this fixture needs an MCP client')
  return ctx.mcp
}

/** A fixture tool whose result is the given content blocks. */
function contentTool(name: string, description: string, blocks: ContentBlock[]): ToolDefinition {
  return defineTool({
    name,
    title: name,
    description,
    input: Empty,
    output: z.object({}),
    annotations: { readOnlyHint: true },
    handler: () => ({}),
    content: () => blocks,
  })
}

function textTool<I extends z.ZodObject>(name: string, description: string, input: I, run: (args: z.output<I>, ctx: ToolContext) => Promise<string>): ToolDefinition {
  return defineTool({
    name,
    title: name,
    description,
    input,
    output: Text,
    annotations: { readOnlyHint: true },
    handler: async (args, ctx) => ({ text: await run(args, ctx) }),
    render: (r) => r.text,
  })
}

async function elicit(ctx: ToolContext, message: string, requestedSchema: Record<string, unknown>): Promise<string> {
  const result = await mcpOf(ctx).request({ method: 'elicitation/create', params: { message, requestedSchema: requestedSchema as never } }, ElicitResultSchema)
  return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`
}

export const FIXTURE_TOOLS: ToolDefinition[] = [
  textTool('test_simple_text', 'Tests simple text content response', Empty, async () => 'This is a simple text response for testing.'),
  contentTool('test_image_content', 'Tests image content response', [{ type: 'image', data: IMAGE, mimeType: 'image/png' }]),
  contentTool('test_audio_content', 'Tests audio content response', [{ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }]),
  contentTool('test_embedded_resource', 'Tests embedded resource content response', [
    { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } },
  ]),
  contentTool('test_multiple_content_types', 'Tests response with multiple content types (text, image, resource)', [
    { type: 'text', text: 'Multiple content types test:' },
    { type: 'image', data: IMAGE, mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
  ]),
  textTool('test_tool_with_logging', 'Tests tool that emits log messages during execution', Empty, async (_args, ctx) => {
    const mcp = mcpOf(ctx)
    for (const [i, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (i > 0) await sleep(50)
      await mcp.notify({ method: 'notifications/message', params: { level: 'info', data } })
    }
    return 'Tool with logging executed successfully'
  }),
  textTool('test_tool_with_progress', 'Tests tool that reports progress notifications', Empty, async (_args, ctx) => {
    const mcp = mcpOf(ctx)
    const progressToken = mcp.progressToken ?? 0
    for (const progress of [0, 50, 100]) {
      if (progress > 0) await sleep(50)
      await mcp.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } })
    }
    return String(progressToken)
  }),
  textTool('test_reconnection', 'Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the stream mid-call', Empty, async (_args, ctx) => {
    mcpOf(ctx).closeStream?.()
    await sleep(100)
    return 'Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.'
  }),
  defineTool({
    name: 'json_schema_2020_12_tool',
    title: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    // A declared dialect: published as written, `$schema` and `additionalProperties: false` kept (SEP-1613).
    input: z
      .strictObject({ name: z.string().optional(), address: z.object({ street: z.string().optional(), city: z.string().optional() }).meta({ id: 'address' }).optional() })
      .meta({ $schema: 'https://json-schema.org/draft/2020-12/schema' }),
    output: Text,
    annotations: { readOnlyHint: true },
    handler: (args) => ({ text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` }),
    render: (r) => r.text,
  }),
  textTool('test_error_handling', 'Tests error response handling', Empty, async () => {
    throw new Error('This tool intentionally returns an error for testing')
  }),
  textTool('test_sampling', 'Tests server-initiated sampling (LLM completion request)', z.strictObject({ prompt: z.string().describe('The prompt to send to the LLM') }), async ({ prompt }, ctx) => {
    const result = await mcpOf(ctx).request(
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 } },
      CreateMessageResultSchema,
    )
    return `LLM response: ${result.content.type === 'text' ? result.content.text : 'No response'}`
  }),
  textTool('test_elicitation', 'Tests server-initiated elicitation (user input request)', z.strictObject({ message: z.string().describe('The message to show the user') }), ({ message }, ctx) =>
    elicit(ctx, message, { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] }),
  ),
  textTool('test_elicitation_sep1034_defaults', 'Tests elicitation with default values per SEP-1034', Empty, (_args, ctx) =>
    elicit(ctx, 'Please review and update the form fields with defaults', {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    }),
  ),
  textTool('test_elicitation_sep1330_enums', 'Tests elicitation with enum schema improvements per SEP-1330', Empty, (_args, ctx) =>
    elicit(ctx, 'Please select options from the enum fields', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          description: 'Select one option with titles',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          description: 'Select multiple options with titles',
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
      required: [],
    }),
  ),
]

/** The resources and prompts the suite reads, added to each MCP session's server. */
export function addFixtureResourcesAndPrompts(mcp: McpServer): void {
  mcp.registerResource('static-text', 'test://static-text', { title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain' }, () => ({
    contents: [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }))
  mcp.registerResource('static-binary', 'test://static-binary', { title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png' }, () => ({
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: IMAGE }],
  }))
  mcp.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    (uri, variables) => ({
      contents: [{ uri: uri.toString(), mimeType: 'application/json', text: JSON.stringify({ id: variables.id, templateTest: true, data: `Data for ID: ${String(variables.id)}` }) }],
    }),
  )
  mcp.registerResource('watched-resource', 'test://watched-resource', { title: 'Watched Resource', description: 'A resource for subscription tests', mimeType: 'text/plain' }, () => ({
    contents: [{ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' }],
  }))

  mcp.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }))
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      argsSchema: {
        arg1: completable(z.string().describe('First test argument'), (value) => ['paris', 'park', 'party'].filter((v) => v.startsWith(value ?? ''))),
        arg2: z.string().describe('Second test argument'),
      },
    },
    ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }),
  )
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    { title: 'Prompt With Embedded Resource', description: 'A prompt that includes an embedded resource', argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') } },
    ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  )
  mcp.registerPrompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt that includes image content' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: IMAGE, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }))
}
