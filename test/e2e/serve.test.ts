import { describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { connect as netConnect } from 'node:net'
import path from 'node:path'
import { openStore } from '../../src/index.js'
import { testDir } from '../helpers/store.js'
import { request, SseClient } from '../helpers/http.js'
import { runCli, startServeCli } from '../helpers/cli.js'
import { useCleanups } from '../helpers/cleanup.js'

const cleanups = useCleanups()
const startCli = (cwd: string, args: string[] = [], env: Record<string, string> = {}) => startServeCli(cleanups, cwd, args, env)

async function run(args: string[], cwd: string, env: Record<string, string> = {}) {
  const { code, stdout: out, stderr: err } = await runCli(args, cwd, env)
  return { code, out, err }
}

describe('marginalia serve (built)', () => {
  it('refuses to bind 0.0.0.0 without a token: non-zero exit, a clear message, nothing created', async () => {
    const { dir } = testDir(cleanups)
    const r = await run(['serve', '--host', '0.0.0.0', '--port', '0'], dir)
    expect(r.code).not.toBe(0)
    expect(r.err).toContain('refusing to listen on 0.0.0.0 without a token')
    expect(r.err).toContain('--token')
    expect(r.out).toBe('')
    expect(existsSync(path.join(dir, '.marginalia'))).toBe(false)
  })

  it('serves the default store, prints the URL, the MCP endpoint, how to connect an agent and the head snippet; SIGTERM exits 0 after flushing', async () => {
    const { dir } = testDir(cleanups)
    const cli = await startCli(dir)
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(cli.stderr()).toContain(`MCP:     ${cli.url}/mcp`)
    // One way to connect an agent (init's stdio config), as the Vite plugin and init say it; the
    // HTTP command only for a team server.
    expect(cli.stderr()).toContain('Connect an agent: npx --no-install marginalia init')
    expect(cli.stderr()).not.toContain('claude mcp add')
    expect(cli.stderr()).toContain(`<script src="${cli.url}/loader.js"></script>`)
    expect(cli.stderr()).toContain(path.join(dir, '.marginalia', 'store.json'))

    const health = await request(`${cli.url}/health`)
    expect(health.json).toMatchObject({ status: 'ok', rev: 0 })
    const session = await request(`${cli.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    expect(session.status).toBe(201)
    const events = await SseClient.open(`${cli.url}/api/events`, { 'Last-Event-ID': '0' })
    cleanups.push(() => events.close())
    await events.until((es) => es.some((e) => e.id === '1'))

    const exited = once(cli.child, 'exit')
    cli.child.kill('SIGTERM')
    const [code] = (await exited) as [number | null]
    expect(code).toBe(0)
    await events.ended$()
    expect(cli.stderr()).toContain('stopping (SIGTERM)')
    expect(cli.stdout()).toBe('')

    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    expect(store.listSessions().map((s) => s.url)).toEqual(['http://localhost:5173/'])
  })

  it('--store, MARGINALIA_TOKEN and SIGINT', async () => {
    const { dir } = testDir(cleanups)
    const cli = await startCli(dir, ['--store', 'custom/notes.json'], { MARGINALIA_TOKEN: 'env-token' })
    expect(cli.stderr()).toContain('Authorization: Bearer <token>')
    expect(cli.stderr()).not.toContain('env-token')
    expect((await request(`${cli.url}/api/sessions`)).status).toBe(401)
    const ok = await request(`${cli.url}/api/sessions`, { method: 'POST', body: { url: 'http://x/' }, headers: { Authorization: 'Bearer env-token' } })
    expect(ok.status).toBe(201)
    const exited = once(cli.child, 'exit')
    cli.child.kill('SIGINT')
    expect(((await exited) as [number | null])[0]).toBe(0)
    expect(existsSync(path.join(dir, 'custom', 'notes.json'))).toBe(true)
  })

  it('--max-sessions and --headers-timeout reach the server; every new flag is in --help; bad values are refused', async () => {
    const { dir } = testDir(cleanups)
    const cli = await startCli(dir, ['--max-sessions', '2', '--headers-timeout', '300', '--request-timeout', '600', '--sse-buffer', '65536'])
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }
    const accept = { Accept: 'application/json, text/event-stream' }
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await request(`${cli.url}/mcp`, { method: 'POST', headers: accept, body: init })).headers['mcp-session-id'] as string)
    const ping = (id: string) => request(`${cli.url}/mcp`, { method: 'POST', headers: { ...accept, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' }, body: { jsonrpc: '2.0', id: 2, method: 'ping' } })
    expect((await ping(ids[0]!)).status).toBe(404) // the cap of 2 ended the oldest idle session
    expect((await ping(ids[2]!)).status).toBe(200)

    // Headers that never finish: 408 once the headers timeout has passed (node checks every ~250 ms here).
    const socket = netConnect(Number(new URL(cli.url).port), '127.0.0.1')
    cleanups.push(() => socket.destroy())
    await once(socket, 'connect')
    const started = Date.now()
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    let answer = ''
    socket.on('data', (d: Buffer) => (answer += d))
    await once(socket, 'close')
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    expect(Date.now() - started).toBeLessThan(5_000) // node's own default would be 60 s

    for (const [args, message] of [
      [['--max-sessions', '0'], '--max-sessions must be a whole number from 1'],
      [['--sse-buffer', 'lots'], '--sse-buffer must be a whole number'],
      [['--headers-timeout', '5000', '--request-timeout', '1000'], '--headers-timeout (5000) must not be longer than --request-timeout (1000)'],
    ] as const) {
      const bad = await run(['serve', '--port', '0', ...args], dir)
      expect(bad.code, args.join(' ')).not.toBe(0)
      expect(bad.err).toContain(message)
    }
    const help = await run(['serve', '--help'], dir)
    for (const flag of ['--max-sessions', '--headers-timeout', '--request-timeout', '--sse-buffer']) expect(help.out).toContain(flag)
  })

  it('usage: serve --help, a bad port, a port in use', async () => {
    const { dir } = testDir(cleanups)
    const help = await run(['serve', '--help'], dir)
    expect(help.code).toBe(0)
    expect(help.out).toContain('--allow-origin')
    const top = await run(['--help'], dir)
    expect(top.out).toContain('serve')
    const bad = await run(['serve', '--port', 'eighty'], dir)
    expect(bad.code).not.toBe(0)
    expect(bad.err).toContain('--port must be a whole number')

    const cli = await startCli(dir)
    const port = new URL(cli.url).port
    const busy = await run(['serve', '--port', port], dir)
    expect(busy.code).not.toBe(0)
    expect(busy.err).toContain(`port ${port}`)
    expect(busy.err).toContain('already in use')
  })
})
