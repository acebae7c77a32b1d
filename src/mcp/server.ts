/**
 * createServer(store, options) → a configured McpServer (the official SDK's v2 server package):
 * tools from the tool registry (shaped by the permission policy in options), the store as
 * readable and subscribable resources, and the work_loop prompt. The same server speaks both
 * protocol revisions: a 2025-11-25 session (initialize, then requests on one connection) and
 * 2026-07-28 requests (stateless, each carrying its revision in `_meta`). The serving entries
 * (src/mcp/serve.ts for stdio, src/http/mcp.ts for HTTP) call it once per connection, per
 * session or per request, with the era it serves; the registry may be shared.
 */
import { McpServer, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server'
import type { Store } from '../store/store.js'
import { titleFromName, waitTaskOf, type McpCallContext } from '../tools/define.js'
import { createToolRegistry, ToolRegistry, type CallOutcome, type RegistryOptions, type ToolService } from '../tools/registry.js'
import type { ToolError } from '../tools/result.js'
import { clientCapabilitiesOf, offerInboxAppToAppsOnly, registerInboxApp, withInboxApp } from './app.js'
import { instructionsFor } from './instructions.js'
import { registerPrompts } from './prompts.js'
import { registerResources } from './resources.js'
import { TASKS_CAPABILITY, type TaskTable } from './tasks.js'
import { CHANNEL_CAPABILITIES, attachChannel, type ChannelOptions } from './channel.js'
import { Deliveries } from './deliveries.js'
import type { ToldLedger } from '../store/told.js'
import { TASKS_EXTENSION_V2, createTaskV2, declaresTasksV2, registerTasksV2, runsAsTaskV2, storeTag, type TasksV2Host } from './tasks-v2.js'

/** Where a failed call's `{ code, message, details? }` is, in the result's `_meta`. */
const ERROR_META_KEY = 'marginalia/error'

/** The stateless revision: no initialize, the revision in every request's `_meta`. */
const MODERN_PROTOCOL_VERSION = '2026-07-28'

/** Every revision this server negotiates, newest first: the stateless one, then the session ones. */
const PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS]

/** Which wire generation an instance serves: `legacy` = 2025 sessions, `modern` = 2026-07-28 stateless requests. */
type Era = 'legacy' | 'modern'

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
  /**
   * The era this instance serves (default `legacy`: a session opened by initialize). A `modern`
   * instance sends resource changes as they happen, for the serving entry to route onto the
   * client's `subscriptions/listen` streams; over HTTP the entry publishes them itself and passes
   * `resourceEvents: false`.
   */
  era?: Era
  /**
   * Whether this instance forwards store changes as resource notifications (default true). The
   * HTTP entry turns it off for its per-request instances: one store subscription per process
   * feeds every listen stream instead.
   */
  resourceEvents?: boolean
  /**
   * Run the waits as tasks. For a 2025-11-25 client that asks (tools/call with `task`): declared
   * in the capabilities and on each wait's listing (`execution.taskSupport: "optional"`), run by
   * this table. For a 2026-07-28 request that declares the tasks extension: stateless tasks any
   * process on the store answers (src/mcp/tasks-v2.ts); the table only tells which tools are waits.
   */
  tasks?: TaskTable
  /** Whose tasks this instance sees (an identity, a session); default: one owner for every client. */
  taskOwner?: string
  /**
   * Be Claude Code's channel (src/mcp/channel.ts): on a 2025 session only (the handshake Claude
   * Code speaks), declare `experimental['claude/channel']` and `['claude/channel/permission']`,
   * push the person's news and relay permission prompts. Off by default.
   */
  channel?: ChannelOptions
  /**
   * The told ledger beside the store (`.marginalia/told.json`): what this session's waits hand to
   * its agent is recorded there, and its pushes skip what any path (a wait, a hook, the monitor,
   * the channel) handed that agent already. Default: the channel's ledger, if any.
   */
  told?: ToldLedger
}

export function createServer(store: Store, options: ServerOptions = {}): McpServer {
  if (options.registry) {
    const ignored = (['profile', 'allow', 'deny', 'plugins', 'tools'] as const).filter((key) => options[key] !== undefined)
    if (ignored.length > 0) throw new Error(`createServer: ${ignored.join(', ')} would be ignored next to registry; give them to createToolRegistry instead.`)
  }
  const base = options.registry ?? createToolRegistry(store, options)
  const info = base.serverInfo()
  const { tools, ...capabilities } = info.capabilities
  // 2025-11-25 sessions: tasks in the core protocol, run by the table. 2026-07-28: the tasks extension, stateless.
  const tasks = options.era === 'modern' ? undefined : options.tasks
  const waitTasks = options.era === 'modern' ? options.tasks : undefined
  const owner = options.taskOwner ?? ''
  const extensions = (capabilities as { extensions?: Record<string, unknown> }).extensions
  const channel = options.era === 'modern' ? undefined : options.channel
  const experimental = channel ? { experimental: { ...(capabilities as { experimental?: Record<string, object> }).experimental, ...CHANNEL_CAPABILITIES } } : {}
  // Tools are declared after construction: declared here, McpServer would install its own tool handlers.
  const mcp = new McpServer(
    { name: options.name ?? info.name, title: info.title, version: info.version },
    {
      capabilities: tasks
        ? { ...capabilities, ...experimental, tasks: TASKS_CAPABILITY }
        : waitTasks
          ? { ...capabilities, extensions: { ...extensions, ...TASKS_EXTENSION_V2 } }
          : { ...capabilities, ...experimental },
      instructions: instructionsFor(info.tools),
      supportedProtocolVersions: [...PROTOCOL_VERSIONS],
    },
  )
  const server = mcp.server
  const deliveries = new Deliveries(options.told ?? channel?.ledger, channel?.log)
  // The agent behind this client: on a 2025 session the name it gave on initialize, else the one in the request's _meta.
  const agentKey = (ctx: ServerContext): string => Deliveries.keyOf(server.getClientVersion()?.name ?? clientNameIn(ctx))
  // The waits: as the task table knows them, else as the registry's definitions declare them (`listening`).
  const isWait = (name: string): boolean => (options.tasks ? options.tasks.supports(name) : base instanceof ToolRegistry && waitTaskOf(base.tool(name)) !== undefined)
  // The inbox as an MCP App, for clients that render apps (src/mcp/app.ts): its tools and resource.
  const registryFor = withInboxApp(base, store)
  const registryOf = (ctx: ServerContext): ToolService => registryFor(clientCapabilitiesOf(mcp, ctx))
  server.registerCapabilities({ tools })
  registerResources(mcp, store, { era: options.era ?? 'legacy', events: options.resourceEvents !== false })
  registerInboxApp(mcp)
  offerInboxAppToAppsOnly(mcp)
  registerPrompts(mcp, store, info.tools)

  const outputSchemaOf = (registry: ToolService, name: string): Record<string, unknown> | undefined =>
    registry.list().find((t) => t.name === name)?.outputSchema as Record<string, unknown> | undefined

  const host: TasksV2Host = {
    evaluate: (ctx, name, args, deadline) => registryOf(ctx).call(name, args, { signal: ctx.mcpReq.signal, maxWaitMs: 0, ...(deadline !== undefined ? { pollDeadline: deadline } : {}) }),
    toResult: (ctx, name, outcome) =>
      server.projectCallToolResult(toCallToolResult(outcome), options.outputSchemas === false ? undefined : outputSchemaOf(registryOf(ctx), name)),
    owner: () => owner,
    waitOf: (name) => waitTasks?.waitOf(name),
    store: storeTag(store),
  }

  server.setRequestHandler('tools/list', (_request, ctx) => ({
    tools: registryOf(ctx).list().map((t) => ({
      name: t.name,
      // For people: a client shows the name without one, so a title that only restates it is not listed.
      ...(t.title === titleFromName(t.name) ? {} : { title: t.title }),
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      ...(options.outputSchemas === false || t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema as { type: 'object' } }),
      annotations: t.annotations,
      ...(tasks?.supports(t.name) ? { execution: { taskSupport: 'optional' as const } } : {}),
      ...(t._meta ? { _meta: t._meta } : {}),
    })),
  }))

  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const params = request.params
    const registry = registryOf(ctx)
    const outputSchema = options.outputSchemas === false ? undefined : outputSchemaOf(registry, params.name)
    if (waitTasks && runsAsTaskV2(params.name, host.waitOf) && declaresTasksV2(clientCapabilitiesOf(mcp, ctx))) {
      // Answered at once with a task (or with the call's failure); tasks/get answers the rest.
      return (await createTaskV2(host, ctx, params.name, params.arguments ?? {})) as CallToolResult
    }
    const taskWish = (params as { task?: { ttl?: unknown } }).task
    if (tasks && taskWish !== undefined && tasks.supports(params.name)) {
      // Answered at once with the task; the wait runs on, its progress kept as the task's status message.
      const ttl = typeof taskWish.ttl === 'number' ? taskWish.ttl : undefined
      const created = tasks.start(owner, ttl, async (signal, progress) => {
        const outcome = await registry.call(params.name, params.arguments ?? {}, { signal, onProgress: (p, message) => progress(message ?? `progress ${p}`) })
        return server.projectCallToolResult(toCallToolResult(outcome), outputSchema)
      })
      // The SDK checks every tools/call answer against CallToolResult (content, loose): an empty
      // content list lets the task answer (CreateTaskResult: { task }) through unchanged.
      return { content: [], ...created }
    }
    const progressToken = ctx.mcpReq._meta?.progressToken
    const call = () => registry.call(params.name, params.arguments ?? {}, {
      signal: ctx.mcpReq.signal,
      mcp: mcpCallContext(ctx),
      onProgress:
        progressToken === undefined
          ? undefined
          : (progress, message) => {
              // Progress is advisory: a client gone mid-call loses nothing by missing it.
              void ctx.mcpReq
                .notify({ method: 'notifications/progress', params: { progressToken, progress, ...(message !== undefined ? { message } : {}) } })
                .catch(() => {})
            },
    })
    // A wait holds this session's pushes while it runs and records what it handed the agent.
    const outcome = isWait(params.name) ? await deliveries.wait(agentKey(ctx), call) : await call()
    return server.projectCallToolResult(toCallToolResult(outcome), outputSchema)
  })

  if (channel) attachChannel(mcp, store, { ...channel, deliveries })
  tasks?.register(server, () => owner)
  if (waitTasks) registerTasksV2(server, host, (ctx) => declaresTasksV2(clientCapabilitiesOf(mcp, ctx)))
  return mcp
}

/** What a tool sees of the MCP call it runs in (ctx.mcp). */
function mcpCallContext(ctx: ServerContext): McpCallContext {
  const progressToken = ctx.mcpReq._meta?.progressToken
  const closeStream = ctx.http?.closeSSE
  return {
    notify: (notification) => ctx.mcpReq.notify(notification),
    // The tool's zod schema is a Standard Schema: the SDK validates the answer with it.
    request: (req, resultSchema) => ctx.mcpReq.send(req, resultSchema) as never,
    ...(progressToken !== undefined ? { progressToken } : {}),
    ...(ctx.sessionId !== undefined ? { sessionId: ctx.sessionId } : {}),
    ...(closeStream ? { closeStream } : {}),
  }
}

/**
 * A call's outcome as MCP sends it. Success: the structured result, and its text rendering (or
 * the tool's own content blocks). Failure: `isError`, the message as text, and the error `{ code, message, details? }` as
 * `_meta["marginalia/error"]`, for clients that read the code.
 */
export function toCallToolResult(outcome: CallOutcome): CallToolResult {
  if (!outcome.ok) {
    const { code, message, details } = outcome.error
    const error: ToolError = details ? { code, message, details } : { code, message }
    // No structured content: the output schema describes the success shape only, and clients validate whatever structured content they get.
    return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], _meta: { [ERROR_META_KEY]: error } }
  }
  return { content: outcome.content ?? [{ type: 'text', text: outcome.text }], structuredContent: outcome.result }
}

/** The client's name as a 2026-07-28 request carries it in `_meta`. */
function clientNameIn(ctx: ServerContext): string | undefined {
  const info = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientInfo'] as { name?: unknown } | undefined
  return typeof info?.name === 'string' ? info.name : undefined
}
