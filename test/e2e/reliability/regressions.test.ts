/**
 * Regression tests for the bugs the reliability campaign found. Each names the
 * campaign test that found it.
 */
import { describe, expect, it } from 'vitest'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { once } from 'node:events'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { connect as netConnect } from 'node:net'
import path from 'node:path'
import { StoreFileError, ValidationError, createToolRegistry, openStore, startHttpServer, type HttpServerOptions } from '../../../src/index.js'
import { request, serve, SseClient } from '../../helpers/http.js'
import { listenOverflows, rawExchange } from './lib/raw.js'
import { connect, errorOf } from '../../helpers/mcp.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { populated } from './lib/hostile.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function client() {
  const store = memoryStore()
  const mcp = await connect(store)
  cleanups.push(() => mcp.close())
  return { store, mcp }
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

describe('errors never grow with hostile input (found by fuzz-tools: a 900 KB error reply)', () => {
  it('an unknown megabyte-long key is clipped in the INVALID_PARAMS message and details', async () => {
    const { mcp } = await client()
    const key = 'k'.repeat(1_000_000)
    const result = await mcp.call('get_all_pending', { [key]: 1 })
    const error = errorOf(result)
    expect(error.code).toBe('INVALID_PARAMS')
    expect(error.message).toMatch(/… \(100\d{4} characters\)/)
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('ten thousand unknown keys make one bounded message', async () => {
    const { mcp } = await client()
    const args = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`extra_${i}`, i]))
    const result = await mcp.call('list_sessions', args)
    expect(errorOf(result).code).toBe('INVALID_PARAMS')
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('an unknown tool name of 100 000 characters is clipped', async () => {
    const { mcp } = await client()
    const result = await mcp.call('x'.repeat(100_000))
    const error = errorOf(result)
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain('(100000 characters)')
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('ValidationError keeps at most 20 issues and says how many more there were', () => {
    const error = new ValidationError(Array.from({ length: 50 }, (_, i) => ({ path: `f${i}`, message: 'bad' })))
    expect(error.issues).toHaveLength(21)
    expect(error.issues.at(-1)!.message).toBe('and 30 more issue(s)')
  })

  it('a store error naming a huge id is clipped too', async () => {
    const store = memoryStore()
    const registry = createToolRegistry(store)
    const outcome = await registry.call('get_annotation', { id: 'a'.repeat(128) })
    expect(outcome.ok).toBe(false)
    await expect(store.acknowledge('z'.repeat(1_000_000))).rejects.toThrow(/\(1000000 characters\)/)
    const error = await store.acknowledge('z'.repeat(1_000_000)).catch((e: unknown) => e)
    expect(bytes(error)).toBeLessThan(2_000)
  })
})

describe('tools/call with arguments that are not an object (found by fuzz-tools: answered -32603 "internal error")', () => {
  it('is JSON-RPC InvalidParams (-32602), and the server keeps serving', async () => {
    const { mcp } = await client()
    for (const args of ['text', 42, [1, 2], true]) {
      const error = await mcp.client
        .request({ method: 'tools/call', params: { name: 'list_sessions', arguments: args as unknown as Record<string, unknown> } }, CallToolResultSchema)
        .then(() => null, (e: unknown) => e as { code?: number })
      expect(error?.code).toBe(-32602)
    }
    const ok = (await mcp.call('list_sessions')) as CallToolResult
    expect(ok.isError).toBeFalsy()
  })
})

describe('a store that cannot be opened leaves no file open (found by npm test: DEP0137 "Closing a FileHandle object on garbage collection")', () => {
  /** Open file descriptors of this process (Linux). */
  const openFds = () => readdirSync('/proc/self/fd').length

  it.skipIf(!existsSync('/proc/self/fd'))('a log event that does not fit the snapshot: openStore rejects naming the store and closes the log it had opened', async () => {
    const { file } = testDir(cleanups, 'marginalia-regression-')
    await populated(file)
    const log = path.join(path.dirname(file), 'store.events.jsonl')
    const lines = readFileSync(log, 'utf8').split('\n')
    writeFileSync(log, [lines[0]!.replace(/"annotationId":"ann_/, '"annotationId":"an_'), ...lines.slice(1)].join('\n'))
    const before = openFds()
    for (let i = 0; i < 20; i++) {
      const error = await openStore({ file, pollIntervalMs: 0, watchFiles: false }).then(
        async (s) => {
          await s.close()
          return null
        },
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(StoreFileError)
    }
    expect(openFds()).toBe(before)
  })
})

describe('HTTP: what node answers for a bad request (found by http-abuse: a 64 KiB query string or header, and a request past the timeout, all got "400 Bad Request")', () => {
  it('headers over 16 KiB (a long query string too) are 431, a request too slow is 408; both close the connection', async () => {
    const { store, server } = await abuseServer({ headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const rev = store.rev
    const query = await rawExchange(server.port, `GET /api/annotations?limit=${'1'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    expect(query.status).toBe(431)
    expect(query.closedAfterMs).toBeDefined()
    const header = await rawExchange(server.port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${'c'.repeat(20_000)}\r\n\r\n`)
    expect(header.status).toBe(431)
    const slow = await rawExchange(server.port, `POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"url":`)
    expect(slow.status).toBe(408)
    expect(slow.closedAfterMs).toBeGreaterThanOrEqual(550)
    expect(store.rev).toBe(rev)
  })

  it('on a connection that already answered a request, the error is not written into it: the connection is closed', async () => {
    const { server } = await abuseServer()
    const outcome = await rawExchange(server.port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${'c'.repeat(20_000)}\r\n\r\n`)
    expect(outcome.status).toBe(200)
    expect(outcome.text).not.toContain('431')
    expect(outcome.closedAfterMs).toBeDefined()
  })

  it('by default a request has 10 s for its headers (node: 60 s, checked every 30 s), then 408', async () => {
    const { server } = await abuseServer({})
    const [nothing, partial] = await Promise.all([
      rawExchange(server.port, [], 20_000),
      rawExchange(server.port, [{ delayMs: 0, data: 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n' }, ...Array.from({ length: 130 }, () => ({ delayMs: 150, data: 'X-Slow: 1\r\n' }))], 20_000),
    ])
    for (const o of [nothing, partial]) {
      expect(o.status).toBe(408)
      expect(o.closedAfterMs).toBeGreaterThanOrEqual(9_900) // never before the limit…
      expect(o.closedAfterMs).toBeLessThan(19_000) // …and long before node's 60 s
    }
  }, 25_000)

  it('startHttpServer refuses timeouts and a session cap that are not positive whole numbers', async () => {
    const store = memoryStore()
    for (const options of [{ headersTimeoutMs: 0 }, { requestTimeoutMs: -1 }, { requestTimeoutMs: 1.5 }, { maxMcpSessions: 0 }]) {
      await expect(startHttpServer(store, { port: 0, staticDir: null, log: () => {}, ...options })).rejects.toThrow(/must be a positive whole number/)
    }
  })
})

describe('HTTP: a request body broken off by the client (found by http-abuse: logged as an internal error with a stack)', () => {
  it('an aborted body and a malformed chunk are the client’s doing: no internal error in the log, nothing stored', async () => {
    const { store, server, logs } = await abuseServer()
    const rev = store.rev
    const socket = netConnect(server.port, '127.0.0.1')
    await once(socket, 'connect')
    socket.write('POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":"http')
    await new Promise((r) => setTimeout(r, 100))
    socket.destroy()
    const chunk = await rawExchange(server.port, 'POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"ur\r\nzz\r\n')
    expect(chunk.status).toBe(400)
    await new Promise((r) => setTimeout(r, 200))
    expect(logs.filter((l) => /internal error|request failed/.test(l))).toEqual([])
    expect(store.rev).toBe(rev)
  })
})

describe('MCP over HTTP: sessions were unbounded (found by http-abuse: 300 abandoned sessions all kept for an hour, ~44 KB each)', () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } } }
  const accept = { Accept: 'application/json, text/event-stream' }

  it('a new session takes the place of the least recently active idle one; presence counts stay right', async () => {
    const { server, logs } = await abuseServer({ maxMcpSessions: 3 })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await request(server.mcpUrl, { method: 'POST', headers: accept, body: init })
      expect(r.status).toBe(200)
      ids.push(r.headers['mcp-session-id'] as string)
      expect(server.stats().mcpSessions).toBe(Math.min(i + 1, 3))
    }
    expect(server.presence()).toMatchObject({ connected: true, sessions: 3 })
    for (const [i, id] of ids.entries()) {
      const r = await request(server.mcpUrl, { method: 'POST', headers: { ...accept, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' }, body: { jsonrpc: '2.0', id: 2, method: 'ping' } })
      expect(r.status, `session ${i}`).toBe(i < 2 ? 404 : 200)
    }
    expect(logs.filter((l) => /closing MCP session .*: 3 sessions are open and a new one was asked for/.test(l))).toHaveLength(2)
  })

  it('when every session has a stream open, initialize is 503 with Retry-After and a message naming the cap', async () => {
    const { server } = await abuseServer({ maxMcpSessions: 2 })
    for (let i = 0; i < 2; i++) {
      const r = await request(server.mcpUrl, { method: 'POST', headers: accept, body: init })
      const stream = await SseClient.open(server.mcpUrl, { 'Mcp-Session-Id': r.headers['mcp-session-id'] as string, 'Mcp-Protocol-Version': '2025-06-18' })
      cleanups.push(() => stream.close())
      expect(stream.status).toBe(200)
    }
    const refused = await request(server.mcpUrl, { method: 'POST', headers: accept, body: init })
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('Too many MCP sessions: all 2 are in use') } })
    expect(server.stats().mcpSessions).toBe(2)
  })
})

describe('HTTP: a burst of connections (found by http-abuse: 1 000 concurrent creates had ~500 SYNs dropped by a full accept queue, retried a second later; 1 500 slow connections got resets)', () => {
  it.skipIf(listenOverflows() === undefined)('1 000 connections opened at once are all accepted: no listen-queue overflow, all answered', async () => {
    const { server } = await abuseServer()
    const before = listenOverflows()!
    const outcomes = await Promise.all(Array.from({ length: 1_000 }, () => rawExchange(server.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 15_000)))
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([])
    expect(listenOverflows()! - before).toBe(0)
  }, 30_000)
})

async function abuseServer(options: HttpServerOptions = {}) {
  const store = memoryStore()
  cleanups.push(() => store.close())
  const logs: string[] = []
  const server = await serve(store, cleanups, { log: (m) => logs.push(m), ...options })
  return { store, server, logs }
}
