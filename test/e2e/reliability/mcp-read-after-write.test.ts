/**
 * Read-after-write across processes for MCP resources and prompts, as tool calls have it: once
 * another process's write resolved, an agent's `marginalia mcp` (its own process, same store file)
 * that reads a resource or gets the work_loop prompt sees it — never a stale answer.
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openStore } from '../../../src/store/index.js'
import { annotationUri, SESSIONS_URI } from '../../../src/mcp/resources.js'
import { CLI } from '../../helpers/cli.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('MCP resources and prompts after another process writes', () => {
  it('50 probes each: resources/read of the new annotation and of the sessions list, prompts/get for the new session — 0 stale', async () => {
    const { dir } = testDir(cleanups, 'marginalia-raw-mcp-')
    const file = path.join(dir, 'store.json')
    const writer = await openStore({ file })
    cleanups.push(() => writer.close())
    const client = new Client({ name: 'read-after-write', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', file], stderr: 'pipe' }))
    cleanups.push(() => client.close())

    const stale = { annotation: 0, sessions: 0, prompt: 0 }
    for (let i = 0; i < 50; i++) {
      const session = await writer.createSession({ url: `http://localhost:5173/page-${i}` })
      const annotation = await writer.addAnnotation({ sessionId: session.id, comment: `probe ${i}` })
      // The write resolved (durable in the shared file): the agent's process must see it now.
      const read = await client.readResource({ uri: annotationUri(annotation.id) }).catch(() => undefined)
      if (!read || !JSON.stringify(read.contents).includes(`probe ${i}`)) stale.annotation++
      const list = await client.readResource({ uri: SESSIONS_URI })
      if (!JSON.stringify(list.contents).includes(session.id)) stale.sessions++
      const prompt = await client.getPrompt({ name: 'work_loop', arguments: { sessionId: session.id } }).catch(() => undefined)
      if (!prompt) stale.prompt++
    }
    expect(stale).toEqual({ annotation: 0, sessions: 0, prompt: 0 })
  }, 60_000)
})
