/**
 * The Vite plugin's `sameOrigin` proxy adds no reach to the API. A request keeps its Host, so
 * `Host: 192.168.1.10` through the proxy is refused exactly as the server refuses it directly; a
 * client that is not on this machine is refused by the proxy unless a token is configured (then
 * the server asks it for the token); a dev server listening beyond loopback without a token says
 * so once on its log.
 *
 * The dev server listens on a second loopback address (127.0.0.2): a real socket, still loopback.
 * A client on another machine cannot be made on loopback, so one test plugin in front of ours sets
 * the socket's remote address from a test header — what the proxy reads is then what a LAN client
 * would show.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { createServer, type Plugin, type ViteDevServer } from 'vite'
import { describe, expect, it } from 'vitest'
import marginalia from '../../src/integrations/vite/plugin.js'
import { request } from '../helpers/http.js'
import { testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'
import { viteConfig } from '../helpers/vite.js'

const cleanups = useCleanups()

/** The remote address a request claims in `x-test-remote`, set on its socket before any other middleware runs. */
const remoteFromHeader: Plugin = {
  name: 'test-remote-address',
  enforce: 'pre',
  configureServer(server) {
    server.middlewares.use((req, _res, next) => {
      const remote = req.headers['x-test-remote']
      if (typeof remote === 'string') Object.defineProperty(req.socket, 'remoteAddress', { value: remote, configurable: true })
      next()
    })
  },
}

async function devServer(host: string, plugin: Plugin[], logs: string[] = [], listen = true): Promise<ViteDevServer> {
  const { dir } = testDir(cleanups, 'marginalia-proxy-')
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>App</title><h1>App</h1>')
  const config = viteConfig(dir, [remoteFromHeader, ...plugin], { logs })
  const vite = await createServer({ ...config, server: { ...config.server, host } })
  cleanups.push(() => vite.close())
  if (listen) await vite.listen()
  return vite
}

const portOf = (vite: ViteDevServer) => (vite.httpServer!.address() as { port: number }).port

describe("the Vite plugin's sameOrigin proxy", () => {
  it('keeps the Host: a foreign Host is refused through the proxy as the server refuses it; a loopback one works', async () => {
    const plugin = marginalia({ port: 0, sameOrigin: true })
    const vite = await devServer('127.0.0.2', [plugin])
    const devUrl = `http://127.0.0.2:${portOf(vite)}`
    const serverUrl = (await plugin.ready())!.url

    const ok = await request(`${devUrl}/__marginalia/api/sessions`)
    expect(ok.status).toBe(200)
    expect(ok.json.sessions).toEqual([])

    const direct = await request(`${serverUrl}/api/sessions`, { headers: { Host: '192.168.1.10:5173' } })
    const proxied = await request(`${devUrl}/__marginalia/api/sessions`, { headers: { Host: '192.168.1.10:5173' } })
    expect(direct.status).toBe(403)
    expect(proxied.status).toBe(403)
    expect(proxied.json).toEqual(direct.json)
  })

  it('refuses a client that is not on this machine without a token, naming the fix; with a token the server asks for it', async () => {
    const open = marginalia({ port: 0, sameOrigin: true })
    const vite = await devServer('127.0.0.2', [open])
    const devUrl = `http://127.0.0.2:${portOf(vite)}`
    const remote = await request(`${devUrl}/__marginalia/mcp`, { method: 'POST', headers: { 'x-test-remote': '192.168.1.20', Accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } })
    expect(remote.status).toBe(403)
    expect(remote.json.error.message).toContain('192.168.1.20')
    expect(remote.json.error.message).toContain('marginalia({ token })')
    expect((await request(`${devUrl}/__marginalia/api/sessions`, { headers: { 'x-test-remote': '::ffff:192.168.1.20' } })).status).toBe(403)
    // The same request from this machine (IPv4-mapped loopback too) goes through.
    expect((await request(`${devUrl}/__marginalia/api/sessions`, { headers: { 'x-test-remote': '::ffff:127.0.0.1' } })).status).toBe(200)

    const withToken = marginalia({ port: 0, sameOrigin: true, token: 'dev-token-0123456789abcdef' })
    const guarded = await devServer('127.0.0.2', [withToken])
    const guardedUrl = `http://127.0.0.2:${portOf(guarded)}`
    expect((await request(`${guardedUrl}/__marginalia/api/sessions`, { headers: { 'x-test-remote': '192.168.1.20' } })).status).toBe(401)
    const authorized = await request(`${guardedUrl}/__marginalia/api/sessions`, { headers: { 'x-test-remote': '192.168.1.20', Authorization: 'Bearer dev-token-0123456789abcdef' } })
    expect(authorized.status).toBe(200)
  })

  it('a dev server configured beyond loopback without a token says so once; on loopback it says nothing', async () => {
    const logs: string[] = []
    // Not listened on: configureServer runs when the server is created, and nothing is bound beyond loopback.
    const vite = await devServer('0.0.0.0', [marginalia({ port: 0, sameOrigin: true })], logs, false)
    const warnings = logs.filter((l) => l.includes('listens beyond this machine'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('marginalia({ token })')
    await vite.restart()
    expect(logs.filter((l) => l.includes('listens beyond this machine'))).toHaveLength(1)

    const quiet: string[] = []
    await devServer('127.0.0.2', [marginalia({ port: 0, sameOrigin: true })], quiet, false)
    expect(quiet.filter((l) => l.includes('listens beyond'))).toEqual([])
  })
})
