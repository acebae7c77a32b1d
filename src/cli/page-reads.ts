/**
 * The stdio server's page reads, answered beside the SDK: on a 2025 session, a plain
 * `tools/call` of a list tool (get_all_pending, get_pending, get_session) is run on the tool
 * service and its result written at once, without the SDK's per-request work (zod checks of the
 * message, the request and the result, an AbortController, its context and routing), which cost
 * about as much server CPU as the page itself. The answer is the one the SDK path gives: the
 * same `toCallToolResult`, the same bytes. Anything else goes through the SDK: another method or
 * tool, a call with `_meta` (a progress token, a 2026-07-28 envelope) or a task, a client that
 * renders MCP Apps, and every call while a request the SDK was handed is unanswered, so reads
 * never overtake a call the SDK is still running.
 *
 * A client handed a page with a cursor to the next one is likely to walk on (the page's text tells
 * it to): once that page is written, the next one is read ahead, while the client parses what it
 * got. It is kept with the store state it was read from and answers the next request only when
 * that request asks for exactly it (the same tool and arguments, the cursor the page handed out)
 * and the store, caught up with other processes' writes, is still in that state; otherwise it is
 * dropped and the page read as usual. The answer is the same either way: a page is a pure
 * function of the state and the arguments.
 */
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server'
import { rendersApps } from '../mcp/app.js'
import { toCallToolResult } from '../mcp/server.js'
import type { ToolService } from '../tools/registry.js'
import { keepToJson } from '../views/json.js'
import { wrapTransport } from './transport.js'

/** The list tools: read-only, answered at once, their pages sized to the byte budget. */
const PAGE_TOOLS: ReadonlySet<string> = new Set(['get_all_pending', 'get_pending', 'get_session'])

type Id = string | number

/** JSON-RPC's internal error. */
const INTERNAL_ERROR = -32603

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A request's id, if the message is a request (it has a method and an id). */
function requestId(message: JSONRPCMessage): Id | undefined {
  return 'method' in message && 'id' in message ? (message.id as Id) : undefined
}

/** The tool name and arguments of a page read this path answers, else undefined. */
function pageRead(message: JSONRPCMessage): { name: string; args: Record<string, unknown> } | undefined {
  if (!('method' in message) || message.method !== 'tools/call' || !isObject(message.params)) return undefined
  const { name, arguments: args, ...rest } = message.params
  if (typeof name !== 'string' || !PAGE_TOOLS.has(name) || Object.keys(rest).length > 0) return undefined
  if (args !== undefined && !isObject(args)) return undefined
  return { name, args: args ?? {} }
}

/** The store the pages are read from, as a read-ahead checks it: caught up with other processes' writes, then its state. */
export interface PageSource {
  /** Read-after-write across processes (`Store.catchUp`): undefined when nothing can be new. */
  catchUp(): Promise<void> | undefined
  /** The current immutable state: a new object after any change. */
  getState(): object
}

/** A page read ahead: what it answers (the tool and its arguments, as `readKey` spells them), the state it was read from, the result. */
interface ReadAhead {
  key: string
  state: object
  result: CallToolResult
}

type CallToolResult = ReturnType<typeof toCallToolResult>

/** The tool and its arguments as one string, the arguments' keys in order: equal for equal calls. */
function readKey(name: string, args: Record<string, unknown>): string {
  return JSON.stringify([name, ...Object.keys(args).sort().map((k) => [k, args[k]])])
}

/** The cursor of the page after this result's, if it has one (a failure has no structured content). */
function nextCursorOf(result: CallToolResult): string | undefined {
  const cursor = (result.structuredContent as { nextCursor?: unknown } | undefined)?.nextCursor
  return typeof cursor === 'string' ? cursor : undefined
}

/**
 * `transport` with page reads answered from `service` once a 2025 session is initialized, and,
 * with `source` (the store the service reads), the next page of a walk read ahead (see the module
 * comment).
 */
export function answeringPageReads(transport: Transport, service: ToolService, source?: PageSource): Transport {
  let initializeId: Id | undefined
  let appsClient = false
  /** A 2025 session was initialized (its initialize answered) by a client that does not render apps. */
  let session = false
  /** Requests handed to the SDK and not answered yet. */
  const handed = new Set<Id>()
  /** The next page of the walk under way, read ahead; taken (or dropped) by the next page read. */
  let ahead: ReadAhead | undefined

  /** The page read ahead for this call, if it is that page and the store (caught up) is still in its state. */
  const takeAhead = (key: string): Promise<CallToolResult | undefined> | undefined => {
    const kept = ahead
    ahead = undefined
    if (kept === undefined || source === undefined || kept.key !== key) return undefined
    const check = () => (source.getState() === kept.state ? kept.result : undefined)
    const catchingUp = source.catchUp()
    return catchingUp ? catchingUp.then(check, () => undefined) : Promise.resolve(check())
  }

  /** Reads the page after `result`'s, once written, for a client that walks on. */
  const readAhead = (name: string, args: Record<string, unknown>, result: CallToolResult): void => {
    const cursor = nextCursorOf(result)
    if (source === undefined || cursor === undefined) return
    const next = { ...args, cursor }
    const state = source.getState()
    void service.call(name, next).then(
      (outcome) => {
        // Kept only when no write came in while it was read (the service catches up first).
        if (!outcome.ok || source.getState() !== state) return
        const page = toCallToolResult(outcome)
        keepToJson(page) // serialised now, while the client parses the last page
        ahead = { key: readKey(name, next), state, result: page }
      },
      () => {}, // a bug the request itself will meet and answer
    )
  }

  const answer = (id: Id, name: string, args: Record<string, unknown>): void => {
    const failed = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))
    const key = readKey(name, args)
    const early = takeAhead(key)
    const read = (): Promise<CallToolResult> => service.call(name, args).then(toCallToolResult)
    void (early ? early.then((kept) => kept ?? read()) : read())
      .then(
        (result) => transport.send({ result, jsonrpc: '2.0', id } as JSONRPCMessage).then(() => readAhead(name, args, result)),
        // The service answers every expected failure as an outcome; a throw is a bug, answered as
        // the SDK answers a handler's throw: an internal error, so the call is never left waiting.
        (error: unknown) => transport.send({ jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: failed(error).message } }),
      )
      .catch((error: unknown) => transport.onerror?.(failed(error)))
  }
  return wrapTransport(transport, {
    onmessage: (handler) => (message, extra) => {
      const id = requestId(message)
      if (id !== undefined) {
        const read = session && handed.size === 0 ? pageRead(message) : undefined
        if (read) return answer(id, read.name, read.args)
        if ('method' in message && message.method === 'initialize') {
          initializeId = id
          appsClient = isObject(message.params) && rendersApps(message.params.capabilities as never)
        }
        handed.add(id)
      } else if ('method' in message && message.method === 'notifications/cancelled' && isObject(message.params)) {
        // A cancelled request is never answered.
        handed.delete(message.params.requestId as Id)
      }
      handler(message, extra)
    },
    send: (message, options) => {
      if (!('method' in message) && 'id' in message) {
        const id = message.id as Id
        handed.delete(id)
        if (id === initializeId && 'result' in message) {
          const version = (message.result as { protocolVersion?: unknown }).protocolVersion
          session = !appsClient && typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)
        }
      }
      return transport.send(message, options)
    },
  })
}
