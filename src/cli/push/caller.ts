/**
 * How the inbox commands (`list`, `show`, `ack`, `reply`, `resolve`, `dismiss`, `watch`) reach the
 * tools: the project's store through the same tool registry the MCP server serves (same checks,
 * same errors), or a running server's `/mcp` endpoint with `--url` (and a token). Either way a
 * command is a tool call by name with the tool's own arguments.
 */
import { openStore } from '../../store/index.js'
import type { Store } from '../../store/store.js'
import { createToolRegistry, LATEST_PROTOCOL_VERSION } from '../../tools/registry.js'
import { VERSION } from '../../version.js'

/** A tool's failure, as the tool reported it (code and message). */
export class ToolCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`)
  }
}

export interface ToolCaller {
  /** Where the calls go, for messages. */
  readonly where: string
  /** The tool's structured result; throws ToolCallError on a tool error. */
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>
  close(): Promise<void>
}

/** The tools over `store` (already open), in this process. */
function localCaller(store: Store, root?: string): ToolCaller {
  const registry = createToolRegistry(store, { burstSettleMs: 0, ...(root !== undefined ? { sources: { root } } : {}) })
  return {
    where: store.location,
    async call(name, args) {
      const outcome = await registry.call(name, args)
      if (!outcome.ok) throw new ToolCallError(outcome.error.code, outcome.error.message)
      return outcome.result
    },
    close: () => store.close(),
  }
}

/** Opens the store at `location` and calls its tools in this process. */
export async function openLocalCaller(location: string, root?: string): Promise<ToolCaller> {
  return localCaller(await openStore({ file: location }), root)
}

/**
 * The tools of the server at `base` (`http://host:port`), over its `/mcp` endpoint: one MCP session
 * (initialize, then tools/call), JSON-RPC over Streamable HTTP, answers read as JSON or as SSE.
 */
export function remoteCaller(base: string, token: string | undefined): ToolCaller {
  let url: URL
  try {
    url = new URL('/mcp', base)
  } catch {
    throw new Error(`--url ${base}: not a URL; pass the server's address, e.g. http://127.0.0.1:4848`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--url ${base}: use an http:// or https:// address`)
  let session: string | undefined
  let nextId = 1
  let started: Promise<void> | undefined
  const post = async (message: Record<string, unknown>): Promise<Record<string, unknown> | undefined> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
    if (token) headers.authorization = `Bearer ${token}`
    if (session) headers['mcp-session-id'] = session
    let res: Response
    try {
      res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) })
    } catch (e) {
      throw new Error(`cannot reach ${url.origin}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}. Is marginalia serve running there?`)
    }
    session ??= res.headers.get('mcp-session-id') ?? undefined
    if (res.status === 401 || res.status === 403) throw new Error(`${url.origin} refused the call (HTTP ${res.status}): pass the agent's token with --token or $MARGINALIA_TOKEN`)
    if (!('id' in message)) return undefined
    const body = await res.text()
    if (!res.ok) throw new Error(`${url.origin}/mcp answered HTTP ${res.status}: ${body.slice(0, 300)}`)
    const json = (res.headers.get('content-type') ?? '').includes('text/event-stream') ? lastSseMessage(body, message.id) : body
    const reply = JSON.parse(json ?? 'null') as { result?: Record<string, unknown>; error?: { code: number; message: string } } | null
    if (!reply) throw new Error(`${url.origin}/mcp sent no answer to ${String(message.method)}`)
    if (reply.error) throw new ToolCallError('PROTOCOL_ERROR', reply.error.message)
    return reply.result
  }
  const start = (): Promise<void> =>
    (started ??= (async () => {
      await post({ jsonrpc: '2.0', id: nextId++, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'marginalia-cli', version: VERSION } } })
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' })
    })())
  return {
    where: url.origin,
    async call(name, args) {
      await start()
      const result = (await post({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }))!
      if (result.isError === true) {
        const error = (result._meta as Record<string, { code?: string; message?: string }> | undefined)?.['marginalia/error']
        const text = (result.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === 'text')?.text
        throw new ToolCallError(error?.code ?? 'TOOL_ERROR', error?.message ?? text ?? 'the tool failed')
      }
      return (result.structuredContent as Record<string, unknown> | undefined) ?? {}
    },
    async close() {
      if (!session) return
      const headers: Record<string, string> = { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
      if (token) headers.authorization = `Bearer ${token}`
      await fetch(url, { method: 'DELETE', headers }).catch(() => undefined) // the server ends idle sessions anyway
    },
  }
}

/** The `data:` of the SSE message that answers request `id`. */
function lastSseMessage(body: string, id: unknown): string | undefined {
  let found: string | undefined
  for (const block of body.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n')
    if (data === '') continue
    try {
      if ((JSON.parse(data) as { id?: unknown }).id === id) found = data
    } catch {
      // not JSON: skip
    }
  }
  return found
}
