import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { McpServer } from '@modelcontextprotocol/server'
import { createServer, type ServerOptions } from '../../src/server.js'
import type { Store } from '../../src/index.js'

/** A real SDK client connected in-process to createServer(store). */
export async function connect(store: Store, options: ServerOptions = {}, extend?: (server: McpServer) => void) {
  const server = createServer(store, { validateOutput: true, ...options })
  extend?.(server)
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)])
  await client.listTools() // caches output schemas, so every callTool result is validated against them
  return {
    client,
    server,
    async call(name: string, args: Record<string, unknown> = {}) {
      return (await client.callTool({ name, arguments: args })) as CallToolResult
    },
    async close() {
      await client.close()
      await server.close()
    },
  }
}

export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  return result.structuredContent as T
}

export function errorOf(result: CallToolResult): { code: string; message: string; details?: Record<string, unknown> } {
  if (!result.isError) throw new Error(`expected an error result, got ${JSON.stringify(result.structuredContent)}`)
  return (result._meta as Record<string, { code: string; message: string; details?: Record<string, unknown> }>)['marginalia/error']!
}
