import { BUILTIN_TOOLS } from '../../../src/tools/builtin.js'
import { describe, expect, it } from 'vitest'
import { request as httpRequest } from 'node:http'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startHttpServer } from '../../../src/index.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { request, serve, SseClient } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function setup(options: Parameters<typeof serve>[2] = {}) {
  const store = memoryStore()
  cleanups.push(() => store.close())
  const server = await serve(store, cleanups, options)
  return { store, server }
}

describe('DNS-rebinding defence: Host', () => {
  it('answers loopback Host names with any port and refuses any other Host with 403', async () => {
    const { server } = await setup()
    for (const host of [`127.0.0.1:${server.port}`, 'localhost:9999', 'LOCALHOST', '[::1]:80', '127.0.0.1']) {
      const ok = await request(`${server.url}/api/sessions`, { headers: { Host: host } })
      expect(ok.status, host).toBe(200)
    }
    for (const host of ['evil.example', `evil.example:${server.port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '10.0.0.1']) {
      for (const path of ['/api/sessions', '/mcp', '/health', '/api/events', '/']) {
        const denied = await request(`${server.url}${path}`, { headers: { Host: host } })
        expect(denied.status, `${host} ${path}`).toBe(403)
      }
    }
    const denied = await request(`${server.url}/api/sessions`, { headers: { Host: 'evil.example' } })
    expect(denied.json.error.code).toBe('FORBIDDEN')
    expect(denied.json.error.message).toContain('evil.example')
  })

  it('--allow-host adds a name', async () => {
    const { server } = await setup({ allowHosts: ['devbox.internal'] })
    expect((await request(`${server.url}/health`, { headers: { Host: 'devbox.internal:4848' } })).status).toBe(200)
    expect((await request(`${server.url}/health`, { headers: { Host: 'other.internal' } })).status).toBe(403)
  })
})

describe('Origin and CORS', () => {
  it('allows loopback origins on any port (the overlay in a dev app), echoing them in CORS headers', async () => {
    const { server } = await setup()
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080', `http://127.0.0.1:${server.port}`]) {
      const r = await request(`${server.url}/api/sessions`, { headers: { Origin: origin } })
      expect(r.status, origin).toBe(200)
      expect(r.headers['access-control-allow-origin']).toBe(origin)
      expect(r.headers.vary).toContain('Origin')
      // The headers beyond the simple ones are named only where they come (the MCP endpoint, errors).
      expect(r.headers['access-control-expose-headers']).toBeUndefined()
    }
    const missing = await request(`${server.url}/api/sessions/s_nope`, { headers: { Origin: 'http://localhost:5173' } })
    expect(missing.status).toBe(404)
    expect(missing.headers['access-control-expose-headers']).toContain('WWW-Authenticate')
    // No Origin (curl, agents): no CORS headers, still allowed.
    const plain = await request(`${server.url}/api/sessions`)
    expect(plain.status).toBe(200)
    expect(plain.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('refuses a foreign Origin with 403 on the API, SSE, MCP and writes; nothing reaches the store', async () => {
    const { server, store } = await setup()
    for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null', 'http://192.168.1.20:5173']) {
      const r = await request(`${server.url}/api/sessions`, { method: 'POST', headers: { Origin: origin }, body: { url: 'http://x/' } })
      expect(r.status, origin).toBe(403)
      expect(r.json.error.code).toBe('FORBIDDEN')
      expect(r.headers['access-control-allow-origin']).toBeUndefined()
    }
    expect((await request(`${server.url}/api/events`, { headers: { Origin: 'https://evil.example' } })).status).toBe(403)
    const mcp = await request(server.mcpUrl, {
      method: 'POST',
      headers: { Origin: 'https://evil.example', Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    })
    expect(mcp.status).toBe(403)
    expect(server.stats().mcpSessions).toBe(0)
    expect(store.rev).toBe(0)
  })

  it('--allow-origin adds an origin', async () => {
    const { server } = await setup({ allowOrigins: ['https://preview.example.com/'] })
    const r = await request(`${server.url}/api/sessions`, { headers: { Origin: 'https://preview.example.com' } })
    expect(r.status).toBe(200)
    expect(r.headers['access-control-allow-origin']).toBe('https://preview.example.com')
    expect((await request(`${server.url}/api/sessions`, { headers: { Origin: 'https://preview.example.com:8443' } })).status).toBe(403)
  })

  it('a browser extension gets in only by its exact origin: never any other chrome-extension:// or moz-extension:// origin', async () => {
    const ours = 'chrome-extension://fkdilionbgjppppfmpgbfakpiamkedhg'
    const firefox = 'moz-extension://0b7d9c1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e'
    const { server } = await setup({ allowOrigins: [ours, firefox.toUpperCase()] })
    for (const origin of [ours, firefox]) {
      const r = await request(`${server.url}/api/sessions`, { headers: { Origin: origin } })
      expect(r.status, origin).toBe(200)
      expect(r.headers['access-control-allow-origin']).toBe(origin)
    }
    for (const origin of ['chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'moz-extension://00000000-0000-0000-0000-000000000000', `${ours}/`, 'chrome-extension://null', 'null']) {
      expect((await request(`${server.url}/api/sessions`, { headers: { Origin: origin } })).status, origin).toBe(403)
    }
    // Without --allow-origin, no extension at all.
    const { server: plain } = await setup()
    expect((await request(`${plain.url}/api/sessions`, { headers: { Origin: ours } })).status).toBe(403)
    // A pattern or a malformed ID is refused when the server starts.
    await expect(setup({ allowOrigins: ['chrome-extension://*'] })).rejects.toThrow(/not an extension origin/)
    await expect(setup({ allowOrigins: ['chrome-extension://fkdilionbgjppppfmpgbfakpiamkedhz'] })).rejects.toThrow(/not an extension origin/)
  })

  it('answers preflights for allowed origins with the methods and headers the overlay and MCP clients use', async () => {
    const { server } = await setup()
    const r = await request(`${server.url}/api/sessions`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    })
    expect(r.status).toBe(204)
    expect(r.headers['access-control-allow-origin']).toBe('http://localhost:5173')
    expect(r.headers['access-control-allow-methods']).toContain('POST')
    const allowed = String(r.headers['access-control-allow-headers']).toLowerCase()
    for (const h of ['content-type', 'authorization', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version']) expect(allowed).toContain(h)
    expect(r.headers['access-control-expose-headers']).toContain('Mcp-Session-Id')
    const foreign = await request(`${server.url}/mcp`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } })
    expect(foreign.status).toBe(403)
  })
})

describe('bearer token', () => {
  it('with a token: 401 (WWW-Authenticate: Bearer) without it or with a wrong one, 200 with it; /health stays open', async () => {
    const { server } = await setup({ token: 's3cret-token' })
    for (const path of ['/api/sessions', '/api/events', '/api']) {
      const none = await request(`${server.url}${path}`)
      expect(none.status, path).toBe(401)
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/)
      expect(none.json.error.code).toBe('UNAUTHORIZED')
    }
    expect((await request(`${server.url}/api/sessions`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401)
    expect((await request(`${server.url}/api/sessions`, { headers: { Authorization: 'Bearer s3cret-token-and-more' } })).status).toBe(401)
    expect((await request(`${server.url}/api/sessions`, { headers: { Authorization: 's3cret-token' } })).status).toBe(401)
    expect((await request(`${server.url}/api/sessions`, { headers: { Authorization: 'Bearer s3cret-token' } })).status).toBe(200)
    expect((await request(`${server.url}/api/sessions`, { headers: { Authorization: 'bearer s3cret-token' } })).status).toBe(200)
    expect((await request(`${server.url}/health`)).status).toBe(200)

    const sse = await SseClient.open(`${server.url}/api/events`, { Authorization: 'Bearer s3cret-token' })
    cleanups.push(() => sse.close())
    expect(sse.status).toBe(200)
  })

  it('with a token, MCP needs it too: 401 without, a working session with it', async () => {
    const { server } = await setup({ token: 's3cret-token' })
    const raw = await request(server.mcpUrl, {
      method: 'POST',
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    })
    expect(raw.status).toBe(401)
    expect(raw.headers['www-authenticate']).toMatch(/^Bearer/)
    expect(server.stats().mcpSessions).toBe(0)

    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { Authorization: 'Bearer s3cret-token' } } })
    const client = new Client({ name: 'token-test', version: '1.0.0' })
    await client.connect(transport)
    cleanups.push(() => client.close())
    expect((await client.listTools()).tools).toHaveLength(BUILTIN_TOOLS.length)
  })

  it('refuses to bind beyond loopback without a token', async () => {
    const store = memoryStore()
    cleanups.push(() => store.close())
    await expect(startHttpServer(store, { host: '0.0.0.0', port: 0 })).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 without a token/)
    await expect(startHttpServer(store, { host: '192.168.1.10', port: 0 })).rejects.toThrow(/--token/)
  })
})

describe('request body limits', () => {
  it('a declared Content-Length over the limit is 413 before any of the body is sent', async () => {
    const { server, store } = await setup({ maxBodyBytes: 1024 })
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${server.url}/api/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': 10 * 1024 * 1024 } }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on('error', reject)
      req.flushHeaders() // headers only: the 413 must come without the server waiting for 10 MB
    })
    expect(reply.status).toBe(413)
    expect(JSON.parse(reply.body).error.code).toBe('PAYLOAD_TOO_LARGE')
    expect(store.rev).toBe(0)
  })

  it('a streamed (chunked) body is counted and refused with 413 once it passes the limit', async () => {
    const { server, store } = await setup({ maxBodyBytes: 1024 })
    const reply = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.url}/api/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.write('{"url":"http://x/","name":"')
      req.write('y'.repeat(2048))
      // never ends the body: the server must answer anyway
      cleanups.push(() => req.destroy())
    })
    expect(reply).toBe(413)
    expect(store.rev).toBe(0)
  })

  it('a body at the limit is accepted; the MCP endpoint has the same limit', async () => {
    const { server } = await setup({ maxBodyBytes: 200 })
    const body = JSON.stringify({ url: 'http://x/', name: 'n'.repeat(150) })
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(200)
    expect((await request(`${server.url}/api/sessions`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })).status).toBe(201)
    const big = await request(server.mcpUrl, {
      method: 'POST',
      headers: { Accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x'.repeat(300), version: '1' } } },
    })
    expect(big.status).toBe(413)
  })
})

describe('overlay assets', () => {
  it('serves files from the static directory with their content types, / as index.html, and never outside it', async () => {
    const { dir } = testDir(cleanups)
    const assets = path.join(dir, 'overlay')
    mkdirSync(path.join(assets, 'img'), { recursive: true })
    writeFileSync(path.join(assets, 'index.html'), '<!doctype html><title>Inbox</title>')
    writeFileSync(path.join(assets, 'overlay.js'), 'console.log("overlay")')
    writeFileSync(path.join(assets, 'overlay.css'), 'body{}')
    writeFileSync(path.join(assets, 'img', 'logo.svg'), '<svg/>')
    writeFileSync(path.join(dir, 'secret.txt'), 'do not serve')
    const { server } = await setup({ staticDir: assets, token: 'tok' })

    const home = await request(`${server.url}/`)
    expect(home.status).toBe(200)
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(home.text).toContain('<title>Inbox</title>')
    const js = await request(`${server.url}/overlay.js`, { headers: { Origin: 'http://localhost:5173' } })
    expect(js.status).toBe(200)
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(js.headers['x-content-type-options']).toBe('nosniff')
    expect(js.text).toBe('console.log("overlay")')
    expect((await request(`${server.url}/overlay.css`)).headers['content-type']).toBe('text/css; charset=utf-8')
    expect((await request(`${server.url}/img/logo.svg`)).headers['content-type']).toBe('image/svg+xml')
    expect((await request(`${server.url}/missing.js`)).status).toBe(404)
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/img/..%2f..%2fsecret.txt', '/%00']) {
      const r = await request(`${server.url}${p}`)
      expect(r.status, p).toBe(404)
      expect(r.text).not.toContain('do not serve')
    }
    expect((await request(`${server.url}/overlay.js`, { method: 'POST', body: {} })).status).toBe(405)
  })
})
