/**
 * A wait is declared once, on its definition (`listening`), and everything that treats waits
 * differently reads it there: the 2025 task table, the stateless 2026 tasks (what a poll calls, with
 * which arguments, what a working task says) and presence. A tool whose results the inbox shows is
 * marked `showsInApp`, and the inbox app is linked to it. Shown here with a plugin tool, which no
 * list in the server names.
 */
import { describe, expect, it } from 'vitest'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client'
import { z } from 'zod'
import { defineTool } from '../../../src/tools/define.js'
import { memoryStore } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { serve } from '../../helpers/http.js'
import { connectTaskClient, envelope } from '../../helpers/tasks-v2.js'

const cleanups = useCleanups()

/** A plugin wait: it answers `timeout` until the flag is raised. */
function flagWait(flag: { raised: boolean }, polled: string[]) {
  return defineTool({
    name: 'wait_for_flag',
    description: 'Waits until the flag is raised.',
    input: z.strictObject({ label: z.string(), timeoutMs: z.number().int().optional() }),
    output: z.object({ status: z.enum(['raised', 'timeout']), label: z.string() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    listening: { waitingFor: (a) => `Waiting for the flag ${String(a.label)}` },
    showsInApp: true,
    handler: ({ label }) => {
      polled.push(label)
      return { status: flag.raised ? ('raised' as const) : ('timeout' as const), label }
    },
  })
}

describe('a wait declared on its definition', () => {
  it('runs as a 2026-07-28 task: polled with its fixed arguments, saying what it waits for, settled when it stops timing out', async () => {
    const flag = { raised: false }
    const polled: string[] = []
    const http = await serve(memoryStore(), cleanups, { tools: { plugins: [flagWait(flag, polled)] } })
    const c = await connectTaskClient(new StreamableHTTPClientTransport(new URL(http.mcpUrl)), cleanups, 'wait-declaration')
    const execution = await c.session.callTool('wait_for_flag', { label: 'green', timeoutMs: 20_000 }, { requestTimeoutMs: 2_000, task: { preference: 'require' } })
    expect(execution.kind).toBe('task')
    if (execution.kind !== 'task') throw new Error('not a task')
    const working = (await c.raw({ method: 'tasks/get', params: { taskId: execution.handle.taskId, _meta: envelope('wait-declaration') } })) as { result?: { status: string; statusMessage?: string } }
    expect(working.result?.status).toBe('working')
    expect(working.result?.statusMessage).toMatch(/^Waiting for the flag green \(\d+ s left\)\.$/)
    flag.raised = true
    const { outcome } = await execution.settle()
    expect((resultFromTaskOutcome(outcome) as { structuredContent?: unknown }).structuredContent).toEqual({ status: 'raised', label: 'green' })
    expect(new Set(polled)).toEqual(new Set(['green']))
  })

  it('is linked to the inbox app for a client that renders apps, and not for one that does not', async () => {
    const http = await serve(memoryStore(), cleanups, { tools: { plugins: [flagWait({ raised: false }, [])] } })
    const list = async (extensions: Record<string, Record<string, string[]>>) => {
      const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: { extensions }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
      await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
      cleanups.push(() => client.close())
      return (await client.listTools()).tools.find((t) => t.name === 'wait_for_flag')!
    }
    expect((await list({ 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } }))._meta?.ui).toMatchObject({ resourceUri: 'ui://marginalia/inbox.html' })
    expect((await list({}))._meta?.ui).toBeUndefined()
  })
})
