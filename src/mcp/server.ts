/**
 * createServer(store, options) → a configured McpServer: tools from the tool registry (shaped by
 * the permission policy in options), the store as subscribable resources, and the work_loop
 * prompt. Transports (stdio in the CLI, Streamable HTTP in `serve`) connect to it; each
 * connection needs its own server (the registry may be shared).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation'
import { CallToolRequestParamsSchema, CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { Store } from '../store/store.js'
import type { McpCallContext } from '../tools/define.js'
import { createToolRegistry, type CallOutcome, type RegistryOptions, type ToolService } from '../tools/registry.js'
import type { ToolError } from '../tools/result.js'
import { registerInboxApp, withInboxApp } from './app.js'
import { instructionsFor } from './instructions.js'
import { registerPrompts } from './prompts.js'
import { registerResources } from './resources.js'

/** Where a failed call's `{ code, message, details? }` is, in the result's `_meta`. */
const ERROR_META_KEY = 'marginalia/error'

/**
 * Registry options (tool policy `profile`/`allow`/`deny`, `plugins`, `name`, …) plus an optional
 * ready-made registry. Invalid policy options throw ToolPolicyError here, before anything runs.
 */
export interface ServerOptions extends RegistryOptions {
  /**
   * Serve this registry (or a wrapper around one) instead of building one from the options:
   * shares it across connections.
   */
  registry?: ToolService
  /**
   * List output schemas in tools/list (default true). `false` (the CLI's `--lean`) leaves them out
   * for clients that never read them: results still carry structured content, unvalidated.
   */
  outputSchemas?: boolean
}

/**
 * tools/call with `name` and `arguments` left unchecked at this level. The SDK's Server already
 * validates every tools/call request and answers a malformed one with JSON-RPC InvalidParams
 * (-32602); registering the strict schema as well made the SDK parse it a second time, before
 * that check, and answer the same request with "internal error" (-32603) wrapping a zod dump.
 */
const LenientCallToolRequestSchema = CallToolRequestSchema.extend({
  // Optional here too: a tools/call without params reaches the SDK's own check (-32602), not a parse error (-32603).
  params: CallToolRequestParamsSchema.extend({ name: z.unknown(), arguments: z.unknown().optional() }).optional(),
})

/**
 * The SDK validates elicitation answers with Ajv, and builds an Ajv instance for every server
 * it constructs (~10 ms): build one only when a schema is first needed, and share it.
 */
let ajv: AjvJsonSchemaValidator | undefined
const lazyValidator: jsonSchemaValidator = {
  getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema),
}

export function createServer(store: Store, options: ServerOptions = {}): McpServer {
  if (options.registry) {
    const ignored = (['profile', 'allow', 'deny', 'plugins', 'tools'] as const).filter((key) => options[key] !== undefined)
    if (ignored.length > 0) throw new Error(`createServer: ${ignored.join(', ')} would be ignored next to registry; give them to createToolRegistry instead.`)
  }
  const base = options.registry ?? createToolRegistry(store, options)
  const info = base.serverInfo()
  const { tools, ...capabilities } = info.capabilities
  // Tools are declared after construction: declared here, McpServer would install its own tool handlers.
  const mcp = new McpServer(
    { name: options.name ?? info.name, title: info.title, version: info.version },
    { capabilities, instructions: instructionsFor(info.tools), jsonSchemaValidator: lazyValidator },
  )
  const server = mcp.server
  // The inbox as an MCP App, for clients that render apps (src/mcp/app.ts): its tools and resource.
  const registry = withInboxApp(base, store, () => server.getClientCapabilities())
  registerInboxApp(mcp)
  server.registerCapabilities({ tools })
  registerResources(mcp, store)
  registerPrompts(mcp, store, info.tools)

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: registry.list().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      ...(options.outputSchemas === false ? {} : { outputSchema: t.outputSchema as { type: 'object' } }),
      annotations: t.annotations,
      ...(t._meta ? { _meta: t._meta } : {}),
    })),
  }))

  server.setRequestHandler(LenientCallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // The SDK's own check has refused a call without params before this runs (-32602).
    const params = request.params ?? { name: undefined }
    const progressToken = params._meta?.progressToken
    const mcpCall: McpCallContext = {
      notify: (notification) => extra.sendNotification(notification),
      request: (req, resultSchema) => extra.sendRequest(req, resultSchema),
      ...(progressToken !== undefined ? { progressToken } : {}),
      ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}),
      ...(extra.closeSSEStream ? { closeStream: extra.closeSSEStream } : {}),
    }
    const outcome = await registry.call(params.name as string, params.arguments ?? {}, {
      signal: extra.signal,
      mcp: mcpCall,
      onProgress:
        progressToken === undefined
          ? undefined
          : (progress, message) => {
              // Progress is advisory: a client gone mid-call loses nothing by missing it.
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
                .catch(() => {})
            },
    })
    return toCallToolResult(outcome)
  })

  return mcp
}

/**
 * A call's outcome as MCP sends it. Success: the structured result, and its text rendering (or
 * the tool's own content blocks). Failure: `isError`, the message as text, and the error `{ code, message, details? }` as
 * `_meta["marginalia/error"]`, for clients that read the code.
 */
function toCallToolResult(outcome: CallOutcome): CallToolResult {
  if (!outcome.ok) {
    const { code, message, details } = outcome.error
    const error: ToolError = details ? { code, message, details } : { code, message }
    // No structured content: the output schema describes the success shape only, and clients validate whatever structured content they get.
    return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], _meta: { [ERROR_META_KEY]: error } }
  }
  return { content: outcome.content ?? [{ type: 'text', text: outcome.text }], structuredContent: outcome.result }
}
