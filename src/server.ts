/**
 * createServer(store) → a configured McpServer whose tools come from the tool registry.
 * Transports (stdio in the CLI, Streamable HTTP in `serve`) connect to it.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Store } from './store/store.js'
import { createToolRegistry, type RegistryOptions, type ToolRegistry } from './tools/registry.js'
import { error, json } from './tools/result.js'
import { VERSION } from './version.js'

export interface ServerOptions extends RegistryOptions {
  /** Use this registry instead of building one (shares tool state across sessions). */
  registry?: ToolRegistry
  /** Server name reported to clients. */
  name?: string
}

export function instructionsFor(toolNames: readonly string[]): string {
  const has = (n: string) => toolNames.includes(n)
  const loop = [
    has('watch_annotations') && '1. watch_annotations — wait for what the person pointed at (returns at once if work is pending).',
    has('acknowledge') && '2. acknowledge — take one annotation before you start, so nobody else does it twice.',
    '3. Fix the code: the comment says what is wrong; the selector and text locate it, url is the page (get_annotation has the HTML).',
    (has('resolve') || has('dismiss') || has('reply')) &&
      '4. resolve with a short summary of the change — or reply to ask a question, or dismiss with a reason if it will not be done.',
    has('watch_annotations') && '5. watch_annotations again.',
  ].filter(Boolean)
  return [
    'Marginalia: a person annotates a running web app; you receive each annotation, fix the code, and answer in the page.',
    'Work loop:',
    ...loop,
    has('ask') && 'When something is unclear, ask asks the person on the annotation and waits for the answer (await_reply keeps waiting later).',
    has('watch_changes') && 'To follow replies and reopens as well as new work, use get_changes / watch_changes with the rev you last saw.',
    'Annotations are listed oldest first. A person may reopen an annotation; it then comes back as pending.',
    `Tools: ${toolNames.join(', ')}.`,
  ]
    .filter(Boolean)
    .join('\n')
}

export function createServer(store: Store, options: ServerOptions = {}): McpServer {
  const registry = options.registry ?? createToolRegistry(store, options)
  const mcp = new McpServer(
    { name: options.name ?? 'marginalia', title: 'Marginalia', version: VERSION },
    { capabilities: { logging: {} }, instructions: instructionsFor(registry.names()) },
  )
  const server = mcp.server
  server.registerCapabilities({ tools: { listChanged: false } })

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: registry.list().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      outputSchema: t.outputSchema as { type: 'object' },
      annotations: t.annotations,
    })),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const progressToken = request.params._meta?.progressToken
    const outcome = await registry.call(request.params.name, request.params.arguments ?? {}, {
      signal: extra.signal,
      onProgress:
        progressToken === undefined
          ? undefined
          : (progress, message) => {
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
                .catch(() => {})
            },
    })
    return outcome.ok ? json(outcome.result, outcome.text) : error(outcome.error)
  })

  return mcp
}
