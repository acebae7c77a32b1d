/**
 * The triage inbox as an MCP App (extension `io.modelcontextprotocol/ui`), for hosts that render
 * apps: one `ui://` resource holding the inbox as one self-contained HTML document (built from
 * src/browser/app into dist/overlay/app.html), linked from the tools whose results it shows.
 * The app lists and filters with those tools and writes through two tools of its own
 * (tools/inbox-app.ts), visible to the app only: a reply and a status change, recorded as the
 * agent's through its host (`via: 'host'`), never as the person's — any client can announce the
 * extension, so nothing here tells the person from the agent. The tool policy binds them by name
 * and by the power each call exercises. A client that does not announce the extension sees none of it: no resource in
 * resources/list, no `_meta.ui` on tools, no app tools, and reading the resource is refused.
 *
 * What a client announced is read per request (`clientCapabilitiesOf`): a 2026-07-28 request
 * carries its client's capabilities in its own `_meta` envelope; a 2025 session declared them at
 * initialize. So one instance serving stateless requests answers each as its client announced.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ClientCapabilities,
  type JSONRPCRequest,
  type ListResourcesResult,
  type Result,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server'
import type { Store } from '../store/store.js'
import { APP_TOOLS } from '../tools/inbox-app.js'
import { refusedPower } from '../tools/policy.js'
import type { ToolInfo } from '../tools/publish.js'
import { createToolRegistry, type ToolService } from '../tools/registry.js'
import { PACKAGE_ROOT } from '../version.js'

/** The inbox app's resource. */
export const INBOX_APP_URI = 'ui://marginalia/inbox.html'
/** Where `npm run build` writes the app (scripts/build-overlay.mjs). */
const APP_HTML = path.join(PACKAGE_ROOT, 'dist', 'overlay', 'app.html')

/** Whether the client announced that it renders MCP Apps (the UI extension, with this HTML profile if it lists MIME types). */
export function rendersApps(capabilities: ClientCapabilities | undefined): boolean {
  const ui = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[EXTENSION_ID]
  if (typeof ui !== 'object' || ui === null) return false
  const mimeTypes = (ui as { mimeTypes?: unknown }).mimeTypes
  return !Array.isArray(mimeTypes) || mimeTypes.includes(RESOURCE_MIME_TYPE)
}

const appOnly = { ui: { resourceUri: INBOX_APP_URI, visibility: ['app'] } }

/** The app's own tools, one registry per store (an HTTP server builds an instance per request). */
const appTools = new WeakMap<Store, ToolService>()

/**
 * The client capabilities a request was sent under: its own `_meta` envelope's on the 2026-07-28
 * revision, the ones its session declared at initialize on a 2025 one (undefined before that).
 */
export function clientCapabilitiesOf(mcp: McpServer, ctx: ServerContext): ClientCapabilities | undefined {
  const declared = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof ctx.mcpReq.envelope] as ClientCapabilities | undefined
  // The session-wide accessor (deprecated for 2026-07-28 requests, which carry the envelope) is what a 2025 session has.
  return declared ?? mcp.server.getClientCapabilities()
}

/**
 * `service` as a client with `capabilities` sees it. For a client that renders apps, the linked
 * tools carry `_meta.ui.resourceUri` and the app's own tools the policy lets it call
 * (`serverInfo().appTools`: none on a read-only server, where the app lists and filters and does
 * not write) are listed and callable; a call that would exercise an agent tool the policy does not
 * expose (`inbox_set_status {action: "resolve"}` without `resolve`) is refused. Any other client
 * sees `service` unchanged. The returned function is cheap: call it per request.
 */
export function withInboxApp(service: ToolService, store: Store): (capabilities: ClientCapabilities | undefined) => ToolService {
  let policy: { tools: string[]; appTools: string[]; profile: string } | undefined
  const allowed = () => (policy ??= service.serverInfo())
  const app = (): ToolService => {
    let tools = appTools.get(store)
    if (!tools) appTools.set(store, (tools = createToolRegistry(store, { tools: APP_TOOLS })))
    return tools
  }
  // The tools whose results the app shows (`showsInApp` on their definitions): a host may render the app beside them.
  const linked = (t: ToolInfo): ToolInfo => (t.showsInApp ? { ...t, _meta: { ...t._meta, ui: { resourceUri: INBOX_APP_URI }, [RESOURCE_URI_META_KEY]: INBOX_APP_URI } } : t)
  const forApps: ToolService = {
    serverInfo: () => service.serverInfo(),
    list: () => {
      const own = app()
        .list()
        .filter((t) => allowed().appTools.includes(t.name))
        .map((t) => ({ ...t, _meta: appOnly }))
      return [...service.list().map(linked), ...own]
    },
    call: (name, args, options) => {
      if (!allowed().appTools.includes(name)) return service.call(name, args, options)
      const refused = refusedPower(name, args, allowed().tools)
      if (refused === undefined) return app().call(name, args, options)
      return Promise.resolve({
        ok: false,
        error: {
          code: 'UNAUTHORIZED',
          message: `${name} would ${refused} the annotation, and this server's tool policy does not expose ${refused}: the policy binds the inbox app's tools as it binds the agent's.`,
          details: { tool: name, needs: refused },
        },
      })
    },
  }
  return (capabilities) => (rendersApps(capabilities) ? forApps : service)
}

let html: Promise<string> | undefined

/** The app's HTML, read once from the build. */
function appHtml(): Promise<string> {
  html ??= readFile(APP_HTML, 'utf8').catch((e: unknown) => {
    html = undefined // built later: the next read tries again
    throw new ProtocolError(ProtocolErrorCode.InternalError, `The inbox app is not built (${APP_HTML}: ${e instanceof Error ? e.message : String(e)}); run npm run build.`)
  })
  return html
}

/**
 * Leave the app's resource out of resources/list for a client that does not render apps: wraps
 * the SDK's own resources/list handler (installed when the server declares resources), which
 * the SDK's protected `_getRequestHandler` hands back as it dispatches it.
 */
export function offerInboxAppToAppsOnly(mcp: McpServer): void {
  const server = mcp.server
  type Stored = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>
  const sdkList = (server as unknown as { _getRequestHandler(method: string): Stored | undefined })._getRequestHandler('resources/list')
  if (!sdkList) throw new Error('offerInboxAppToAppsOnly: the server declares no resources (resources/list has no handler)')
  server.setRequestHandler('resources/list', async (request, ctx) => {
    const result = (await sdkList({ jsonrpc: '2.0', id: ctx.mcpReq.id, ...request } as JSONRPCRequest, ctx)) as ListResourcesResult
    return rendersApps(clientCapabilitiesOf(mcp, ctx)) ? result : { ...result, resources: result.resources.filter((r) => r.uri !== INBOX_APP_URI) }
  })
}

/**
 * Register the app's resource on `mcp` (after the store's resources: subscribe then accepts it
 * as a resource that never changes). A client that does not render apps is refused its read,
 * with the capability it would have to declare. Everything the app shows comes through tool
 * calls: no external fetch, so it needs no CSP domains (the host's default CSP, connect-src
 * 'none', suits it).
 */
export function registerInboxApp(mcp: McpServer): void {
  mcp.registerResource(
    'inbox-app',
    INBOX_APP_URI,
    { title: 'Marginalia inbox', description: 'The triage inbox as an MCP App: list, filter and answer annotations.', mimeType: RESOURCE_MIME_TYPE },
    async (uri, ctx) => {
      if (!rendersApps(clientCapabilitiesOf(mcp, ctx))) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } })
      return { contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: await appHtml(), _meta: { ui: { prefersBorder: true } } }] }
    },
  )
}
