/**
 * Claude Code's permission relay end to end in real Chromium: the agent (the official SDK v1
 * client, as Claude Code) sends a permission request to the built `marginalia mcp`; the overlay on
 * the person's page (served by another process on the same store) shows "The agent wants to run
 * `npm test`"; the person clicks Allow and the agent receives the answer. The inbox shows
 * requests too, and says which expired and which were answered elsewhere.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openStore } from '../../../src/store/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { CLI } from '../../helpers/cli.js'
import { eventually, until } from '../../helpers/eventually.js'
import { servePages, startMarginalia } from '../../helpers/page.js'
import { testDir } from '../../helpers/store.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const PermissionNotification = z.object({
  method: z.literal('notifications/claude/channel/permission'),
  params: z.object({ request_id: z.string(), behavior: z.enum(['allow', 'deny']) }),
})

describe.skipIf(!enabled)('permission prompts on the page', () => {
  it('the overlay shows the agent\'s prompt; Allow reaches the agent as notifications/claude/channel/permission', { timeout: 60_000 }, async () => {
    const { dir, file } = testDir(cleanups, 'marginalia-permission-')
    const store = await openStore({ file })
    const { http } = await startMarginalia(cleanups, { storeLocation: file }, store)
    const pages = await servePages({ '/': `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><button id="buy">Buy</button><script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>` }, cleanups)
    const { page } = await chromium.newPage()
    await page.goto(`${pages.origin}/`)

    const client = new Client({ name: 'claude-code', version: '2.1.81' })
    const answers: z.infer<typeof PermissionNotification>['params'][] = []
    client.setNotificationHandler(PermissionNotification, (n) => void answers.push(n.params))
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', file, '--root', dir], env: { ...(process.env as Record<string, string>), MARGINALIA_STORE: '', MARGINALIA_PORT: '1' }, stderr: 'pipe' }))
    cleanups.push(() => client.close())
    expect(client.getServerCapabilities()?.experimental).toMatchObject({ 'claude/channel/permission': {} })

    await client.notification({ method: 'notifications/claude/channel/permission_request', params: { request_id: 'tbxkq', tool_name: 'Bash', description: 'Run the test suite', input_preview: '{"command":"npm test"}' } })
    const card = page.locator('[data-marginalia-permissions] .mg-permission[data-request-id="tbxkq"]')
    await eventually(() => card.locator('.mg-what').textContent(), 15_000).toBe('The agent wants to run npm test')
    expect(await card.locator('.mg-what code').textContent()).toBe('npm test')
    expect(await card.locator('.mg-why').textContent()).toBe('Run the test suite')
    // MARGINALIA_SHOTS=DIR keeps a picture of the prompt to look at.
    if (process.env.MARGINALIA_SHOTS) await page.screenshot({ path: `${process.env.MARGINALIA_SHOTS}/permission-overlay.png` })

    await card.getByRole('button', { name: 'Allow' }).click()
    await until(() => answers.length === 1, 'the answer at the agent', 10_000)
    expect(answers).toEqual([{ request_id: 'tbxkq', behavior: 'allow' }])
    await eventually(() => card.locator('.mg-status').textContent()).toBe('Allowed: sent to the agent.')
    await store.sync()
    expect(store.listPermissions()[0]!.answer).toMatchObject({ behavior: 'allow' })
  })

  it('a request that was already waiting when the page loaded is shown too, and the answer is stored', { timeout: 60_000 }, async () => {
    const { file } = testDir(cleanups, 'marginalia-permission-waiting-')
    const store = await openStore({ file })
    await store.requestPermission({ requestId: 'early', toolName: 'Bash', description: 'Build it', inputPreview: '{"command":"npm run build"}', agent: 'claude-code' })
    const { http } = await startMarginalia(cleanups, { storeLocation: file }, store)
    const pages = await servePages({ '/': `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><script src="${http.url}/overlay.js" defer data-marginalia></script></body></html>` }, cleanups)
    const { page } = await chromium.newPage()
    const asked: string[] = []
    page.on('request', (r) => void (r.url().startsWith(http.url + '/api/') && asked.push(new URL(r.url()).pathname + new URL(r.url()).search)))
    await page.goto(`${pages.origin}/`)
    const card = page.locator('[data-marginalia-permissions] .mg-permission[data-request-id="early"]')
    await eventually(() => card.locator('.mg-what').textContent(), 15_000).toBe('The agent wants to run npm run build')
    // The server said at load what waits; the prompts then listed the requests themselves and
    // follow the page's own stream (no connection of their own).
    await eventually(() => asked.filter((a) => a.includes('events')), 10_000).toEqual([`/api/events?permissions=1&lastEventId=${store.rev}`])
    expect(asked.filter((a) => a.startsWith('/api/permissions'))).toEqual(['/api/permissions'])
    await card.getByRole('button', { name: 'Deny' }).click()
    await eventually(() => store.listPermissions()[0]?.answer?.behavior, 10_000).toBe('deny')
  })

  it('the inbox lists open requests with Allow / Deny, says which expired and which were answered elsewhere', { timeout: 60_000 }, async () => {
    const { file } = testDir(cleanups, 'marginalia-permission-inbox-')
    const store = await openStore({ file })
    const { http } = await startMarginalia(cleanups, { storeLocation: file }, store)
    const { page } = await chromium.newPage()
    const streams: string[] = []
    page.on('request', (r) => void (new URL(r.url()).pathname.endsWith('/events') && streams.push(new URL(r.url()).pathname)))
    await page.goto(`${http.url}/`)
    await page.waitForSelector('[data-inbox-permissions]', { state: 'attached' })
    await store.requestPermission({ requestId: 'write', toolName: 'Write', description: 'Create src/theme.ts', inputPreview: '{"file_path":"src/theme.ts"}' })
    await store.requestPermission({ requestId: 'short', toolName: 'Bash', description: 'Remove the build', inputPreview: '{"command":"rm -rf dist"}', timeoutMs: 1_500 })
    await store.requestPermission({ requestId: 'other', toolName: 'Bash', description: 'Install', inputPreview: '{"command":"npm install"}' })

    const cards = page.locator('[data-inbox-permissions] .mg-permission')
    await eventually(() => cards.count(), 15_000).toBe(3)
    const write = page.locator('[data-inbox-permissions] [data-request-id="write"]')
    expect(await write.locator('.mg-what').textContent()).toBe('The agent wants to use Write')
    expect(await write.locator('pre').textContent()).toBe('{"file_path":"src/theme.ts"}')

    // Answered from another page (or another person's): no buttons left here.
    await store.answerPermission('other', { behavior: 'deny' })
    const other = page.locator('[data-inbox-permissions] [data-request-id="other"]')
    await eventually(() => other.locator('.mg-status').textContent()).toBe('Denied from another page.')
    expect(await other.getByRole('button', { name: 'Allow' }).count()).toBe(0)

    // Expired while shown: said so, and the terminal is where to answer.
    const short = page.locator('[data-inbox-permissions] [data-request-id="short"]')
    await eventually(() => short.locator('.mg-status').textContent(), 10_000).toBe('Expired: answer it in the terminal, where the agent still asks.')

    if (process.env.MARGINALIA_SHOTS) await page.screenshot({ path: `${process.env.MARGINALIA_SHOTS}/permission-inbox.png` })
    await write.getByRole('button', { name: 'Deny' }).click()
    await eventually(() => write.locator('.mg-status').textContent()).toBe('Denied: sent to the agent.')
    await store.sync()
    expect(store.listPermissions().find((p) => p.requestId === 'write')!.answer).toMatchObject({ behavior: 'deny' })
    // The prompts followed the inbox's own stream: one connection for the tab.
    expect(streams).toEqual(['/api/events'])
  })
})
