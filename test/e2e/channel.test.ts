/**
 * Claude Code's channel on the built `marginalia mcp`, driven by the official SDK v1 client over
 * stdio as Claude Code drives it: the capability on the 2025 handshake, the person's news pushed
 * as `notifications/claude/channel`, and a permission prompt relayed to the person and answered
 * through the REST route of a `serve` on the same store (another process).
 */
import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore } from '../../src/index.js'
import { openToldLedger } from '../../src/store/told.js'
import { testDir } from '../helpers/store.js'
import { ChildTransport } from '../helpers/child-transport.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI } from '../helpers/cli.js'
import { spawnNode } from '../helpers/process.js'
import { until } from '../helpers/eventually.js'

const cleanups = useCleanups()

const ChannelNotification = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
})
const PermissionNotification = z.object({
  method: z.literal('notifications/claude/channel/permission'),
  params: z.object({ request_id: z.string(), behavior: z.enum(['allow', 'deny']) }),
})

type Pushed = z.infer<typeof ChannelNotification>['params']

async function channelClient(dir: string, args: string[] = ['--channel']) {
  const mcp = spawnNode(cleanups, [CLI, 'mcp', ...args], { cwd: dir, env: { MARGINALIA_STORE: '' } })
  const client = new Client({ name: 'claude-code', version: '2.1.81' })
  const pushed: Pushed[] = []
  const answers: z.infer<typeof PermissionNotification>['params'][] = []
  client.setNotificationHandler(ChannelNotification, (n) => void pushed.push(n.params))
  client.setNotificationHandler(PermissionNotification, (n) => void answers.push(n.params))
  await client.connect(new ChildTransport(mcp.child))
  cleanups.push(() => client.close())
  return { mcp, client, pushed, answers }
}

describe('the Claude Code channel of marginalia mcp', () => {
  it('declares the channel on the 2025 handshake and pushes each new pending annotation once, with its facts in content and meta', async () => {
    const { dir } = testDir(cleanups)
    const { client, pushed } = await channelClient(dir)
    expect(client.getServerCapabilities()?.experimental).toEqual({ 'claude/channel': {}, 'claude/channel/permission': {} })

    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/cart' })
    const a = await store.addAnnotation({
      sessionId: session.id,
      comment: 'The checkout button overflows on mobile',
      url: 'http://localhost:5173/cart',
      intent: 'fix',
      severity: 'blocking',
      source: { file: 'src/Cart.tsx', line: 42, component: 'CheckoutButton' },
    })
    await until(() => pushed.length === 1, 'the channel notification')
    const [first] = pushed
    expect(first!.meta).toEqual({ annotation_id: a.id, file: 'src/Cart.tsx', line: '42', url: 'http://localhost:5173/cart' })
    for (const key of Object.keys(first!.meta)) expect(key).toMatch(/^[A-Za-z0-9_]+$/)
    expect(first!.content).toBe(`New annotation ${a.id} (fix, blocking) from the person: "The checkout button overflows on mobile" at src/Cart.tsx:42 <CheckoutButton> on http://localhost:5173/cart. Pending; acknowledge it to take it.`)
    expect(Buffer.byteLength(first!.content)).toBeLessThan(300)

    // Counted as told for every Claude Code session: a hook or the monitor will not push it again.
    const ledger = openToldLedger(path.join(dir, '.marginalia'))
    expect(ledger.untold('claude:some-session', [a.id])).toEqual([])

    // The agent takes it and answers; the person's reply there is pushed too, an agent's is not.
    const ack = (await client.callTool({ name: 'acknowledge', arguments: { id: a.id, message: 'On it' } })) as CallToolResult
    expect(ack.isError).toBeFalsy()
    await store.sync()
    await store.reply(a.id, { author: 'human', message: 'Also on the product page, please' })
    await until(() => pushed.length === 2, 'the reply notification')
    expect(pushed[1]).toEqual({
      content: `The person replied on annotation ${a.id} (acknowledged, src/Cart.tsx:42 <CheckoutButton> on http://localhost:5173/cart): "Also on the product page, please"`,
      meta: first!.meta,
    })

    // Each annotation once: a replay of the same event (a reconnect) pushes nothing new.
    await store.sync()
    expect(pushed.filter((p) => p.content.startsWith('New annotation'))).toHaveLength(1)
  })

  it('relays a permission prompt to the person through the store and sends the answer back once', async () => {
    const { dir } = testDir(cleanups)
    const { client, answers } = await channelClient(dir)
    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())

    await client.notification({ method: 'notifications/claude/channel/permission_request', params: { request_id: 'tbxkq', tool_name: 'Bash', description: 'Run the tests', input_preview: '{"command":"npm test"}' } })
    await until(async () => (await store.sync(), store.listPermissions().length === 1), 'the request in the store')
    expect(store.listPermissions()[0]).toMatchObject({ requestId: 'tbxkq', toolName: 'Bash', description: 'Run the tests', inputPreview: '{"command":"npm test"}', agent: 'claude-code' })

    await store.answerPermission('tbxkq', { behavior: 'allow' })
    await until(() => answers.length === 1, 'the permission notification')
    expect(answers).toEqual([{ request_id: 'tbxkq', behavior: 'allow' }])
    await expect(store.answerPermission('tbxkq', { behavior: 'deny' })).rejects.toMatchObject({ code: 'CONFLICT' })

    // A request with a bad id is refused by the schema and never reaches the person.
    await client.notification({ method: 'notifications/claude/channel/permission_request', params: { request_id: 'a b', tool_name: 'Bash' } })
    await client.notification({ method: 'notifications/claude/channel/permission_request', params: { request_id: 'zzzzz', tool_name: 'Write', description: 'Write a file', input_preview: 'src/a.ts' } })
    await until(async () => (await store.sync(), store.listPermissions().length === 2), 'the second request')
    expect(store.listPermissions().map((p) => p.requestId)).toEqual(['tbxkq', 'zzzzz'])
    expect(answers).toHaveLength(1)
  })
})
