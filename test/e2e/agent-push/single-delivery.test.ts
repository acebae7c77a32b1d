/**
 * One annotation reaches one agent once, whichever path gets there first: what a wait of
 * `marginalia mcp` handed to Claude Code, its channel (same session) does not push, and its hooks
 * (another process, any session of that agent) do not tell again; and what a wait of the server's
 * /mcp endpoint handed it, its hooks do not tell again either.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ChildTransport } from '../../helpers/child-transport.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CLI, startServeCli } from '../../helpers/cli.js'
import { until } from '../../helpers/eventually.js'
import { spawnNode } from '../../helpers/process.js'
import { annotate, makeProject, sh } from './lib.js'

const cleanups = useCleanups()

const ChannelNotification = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
})

/** Whether the `marginalia mcp` of `pid` says in its presence file that a wait is running. */
function waiting(root: string, pid: number): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(root, '.marginalia', 'presence', `${pid}.json`), 'utf8')) as { watching?: number }).watching === 1
  } catch {
    return false
  }
}

/** Claude Code's Stop hook as init installs it, with the stdin Claude Code documents. */
function claudeStop(root: string): ReturnType<typeof sh> {
  const stop = { session_id: 's1', transcript_path: path.join(root, 't.jsonl'), cwd: root, permission_mode: 'default', hook_event_name: 'Stop', stop_hook_active: false }
  return sh(`node ${JSON.stringify(CLI)} hook claude Stop`, root, JSON.stringify(stop))
}

describe('no double delivery across paths', () => {
  it('what a wait handed Claude Code is neither pushed by its channel nor told again by its Stop hook', { timeout: 90_000 }, async () => {
    const p = makeProject(cleanups)
    const first = await annotate(p.store, 'Spacing under the title') // the store exists before the agent starts
    const mcp = spawnNode(cleanups, [CLI, 'mcp', '--channel'], { cwd: p.root, env: { MARGINALIA_STORE: '', DATABASE_URL: '' } })
    const client = new Client({ name: 'claude-code', version: '2.1.81' })
    const pushed: string[] = []
    client.setNotificationHandler(ChannelNotification, (n) => void pushed.push(n.params.meta.annotation_id!))
    await client.connect(new ChildTransport(mcp.child))
    cleanups.push(() => client.close())
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult
    const idsOf = (r: CallToolResult) => (r.structuredContent as { annotations: { id: string }[] }).annotations.map((a) => a.id)

    // Pending when the wait starts: the wait hands it over.
    expect(idsOf(await call('watch_annotations', { timeoutMs: 30_000 }))).toEqual([first])
    // While the agent listens, the person annotates (another process): the wait hands it over, the channel holds back.
    const ack = await call('acknowledge', { id: first })
    expect(ack.isError, JSON.stringify(ack.content)).toBeFalsy()
    const listening = call('watch_annotations', { timeoutMs: 30_000 })
    await until(() => waiting(p.root, mcp.child.pid!), 'the wait running', 20_000)
    const second = await annotate(p.store, 'Wrong icon')
    expect(idsOf(await listening)).toEqual([second])
    // News while nobody waits is pushed: the channel is live, and it never pushed the one the wait returned.
    const third = await annotate(p.store, 'Footer overlaps')
    await until(() => pushed.includes(third), 'the push of the third', 20_000)
    expect(pushed).toEqual([third])

    // The agent is gone; one more lands. Its Stop hook (any Claude Code session here) tells only that one.
    await client.close()
    const fourth = await annotate(p.store, 'Logo blurry')
    const hook = await claudeStop(p.root)
    expect(hook.code, hook.stderr).toBe(0)
    expect(hook.stdout).toContain(fourth)
    for (const handed of [first, second, third]) expect(hook.stdout).not.toContain(handed)
  })
  it("what a wait of the server's /mcp endpoint handed Claude Code, its Stop hook does not tell again", { timeout: 90_000 }, async () => {
    const p = makeProject(cleanups)
    const first = await annotate(p.store, 'Spacing under the title')
    const serve = await startServeCli(cleanups, p.root)
    const client = new Client({ name: 'claude-code', version: '2.1.81' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp`)))
    cleanups.push(() => client.close())
    const r = (await client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 30_000 } }, undefined, { timeout: 60_000 })) as CallToolResult
    expect((r.structuredContent as { annotations: { id: string }[] }).annotations.map((a) => a.id)).toEqual([first])
    await client.close()
    const second = await annotate(p.store, 'Wrong icon')
    const hook = await claudeStop(p.root)
    expect(hook.code, hook.stderr).toBe(0)
    expect(hook.stdout).toContain(second)
    expect(hook.stdout).not.toContain(first)
  })
})
