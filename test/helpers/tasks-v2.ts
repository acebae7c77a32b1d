/**
 * A 2026-07-28 task-aware client, as the official packages make one: the v2 Client pinned to
 * 2026-07-28 with a session of `@modelcontextprotocol/ext-tasks`. The SDK Client refuses results
 * it does not know (`resultType: "task"`), so the session sends tools/call and tasks/* through a
 * raw channel on the same transport: requests with ids of their own, whose responses are taken
 * off the transport before the Client sees them.
 */
import { Client, type Transport } from '@modelcontextprotocol/client'
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client'
import type { Cleanups } from './cleanup.js'

const MODERN = '2026-07-28'

type Message = Record<string, unknown>
type Outcome = { kind: 'result'; result: never } | { kind: 'error'; error: never }

/** `inner` with a raw request channel: `send(request)` resolves with the JSON-RPC response to it. */
function withRawChannel<T extends Transport>(inner: T): { transport: T; send: (request: Message, timeoutMs?: number) => Promise<Message> } {
  const pending = new Map<string, (response: Message) => void>()
  let clientOnMessage: Transport['onmessage']
  let next = 0
  const transport = new Proxy(inner, {
    set(target, prop, value) {
      if (prop !== 'onmessage') return Reflect.set(target, prop, value)
      clientOnMessage = value as Transport['onmessage']
      target.onmessage = (message, extra) => {
        const id = (message as { id?: unknown }).id
        const waiting = typeof id === 'string' ? pending.get(id) : undefined
        if (waiting && !('method' in message)) {
          pending.delete(id as string)
          waiting(message as unknown as Message)
          return
        }
        clientOnMessage?.(message, extra)
      }
      return true
    },
    get(target, prop) {
      if (prop === 'onmessage') return clientOnMessage
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  const send = (request: Message, timeoutMs = 10_000): Promise<Message> => {
    const id = `raw-${++next}`
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`raw ${String(request.method)} timed out after ${timeoutMs} ms`))
      }, timeoutMs)
      pending.set(id, (response) => {
        clearTimeout(timer)
        resolve(response)
      })
      inner.send({ ...request, jsonrpc: '2.0', id } as never).catch((e: unknown) => {
        clearTimeout(timer)
        pending.delete(id)
        reject(e instanceof Error ? e : new Error(String(e)))
      })
    })
  }
  return { transport, send }
}

export interface TaskClient {
  client: Client
  session: ReturnType<typeof createTaskSessionFromClient>
  /** One raw request (framed as the session frames them), its JSON-RPC response. */
  raw: (request: Message, timeoutMs?: number) => Promise<Message>
}

/**
 * Connect a 2026-07-28 client over `transport` and open a task session on it; both are closed by
 * `cleanups`. `declareTasks: false` leaves the extension out of the raw requests' capabilities.
 */
export async function connectTaskClient(transport: Transport, cleanups: Cleanups, name = 'tasks-2026'): Promise<TaskClient> {
  const { transport: wrapped, send } = withRawChannel(transport)
  const client = new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
  await client.connect(wrapped)
  cleanups.push(() => client.close())
  const framing = { protocolVersion: MODERN, clientInfo: { name, version: '1.0.0' }, clientCapabilities: {} }
  const session = createTaskSessionFromClient(client, {
    endpointId: `marginalia-${name}`,
    rawDispatch: async (request, options) => {
      const response = await send(request as Message, options?.context?.requestTimeoutMs)
      return ('error' in response ? { kind: 'error', error: response.error } : { kind: 'result', result: response.result }) as Outcome
    },
    v2RequestFraming: framing,
  })
  cleanups.push(() => session.close())
  const raw = (request: Message, timeoutMs?: number) => send(request, timeoutMs)
  return { client, session, raw }
}

/** The `_meta` a 2026-07-28 request carries; with the tasks extension unless `tasks` is false. */
export function envelope(name: string, tasks = true): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
  }
}
