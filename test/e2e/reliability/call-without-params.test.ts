/**
 * A `tools/call` without `params` is the client's mistake: JSON-RPC -32602 (invalid params) over
 * stdio and Streamable HTTP, never -32603 (internal error) with a zod dump; the connection goes on.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { CLI } from '../../helpers/cli.js'
import { serve } from '../../helpers/http.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function callWithoutParams(client: Client): Promise<{ code: number | undefined; message: string }> {
  try {
    await client.request({ method: 'tools/call' } as never, CallToolResultSchema)
    return { code: undefined, message: 'no error' }
  } catch (e) {
    return { code: e instanceof McpError ? e.code : undefined, message: e instanceof Error ? e.message : String(e) }
  }
}

describe('tools/call without params', () => {
  it('over stdio: -32602, and the next call works', async () => {
    const { dir } = testDir(cleanups, 'marginalia-noparams-')
    const client = new Client({ name: 'no-params', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', path.join(dir, 'store.json')], stderr: 'pipe' }))
    cleanups.push(() => client.close())
    const refused = await callWithoutParams(client)
    expect(refused.code).toBe(-32602)
    expect(refused.message).toContain('Invalid tools/call request')
    expect((await client.callTool({ name: 'list_sessions', arguments: {} })).isError).toBeFalsy()
  }, 30_000)

  it('over Streamable HTTP: -32602, and the next call works', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    const server = await serve(store, cleanups)
    const client = new Client({ name: 'no-params', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)))
    cleanups.push(() => client.close())
    expect((await callWithoutParams(client)).code).toBe(-32602)
    expect((await client.callTool({ name: 'list_sessions', arguments: {} })).isError).toBeFalsy()
  }, 30_000)
})
