/** Scenario 1: `marginalia serve`; an MCP client over Streamable HTTP waits; a REST POST wakes it. */
import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { CLI, median, percentile, realisticAnnotation, sleep, tempDir } from './lib.js'

/** Start the bundled `marginalia serve --port 0` in `dir`; resolve with its base URL. */
export async function startServe(dir: string, extra: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--burst-ms', '0', ...extra] /* the wake itself, without the burst window */, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MARGINALIA_STORE: '' } })
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15_000)
    child.stderr!.on('data', (d: Buffer) => {
      err += d
      const m = /URL:\s+(http:\/\/[^/\s]+)/.exec(err)
      if (m) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })
  return { url, child }
}

type Post = (path: string, body: unknown) => Promise<{ id: string }>

/** POST with node:http and a keep-alive agent: a lean client, so the figure is the server's. */
export function httpPoster(url: string): Post {
  const agent = new http.Agent({ keepAlive: true })
  return (path, body) =>
    new Promise((resolve, reject) => {
      const data = JSON.stringify(body)
      const req = http.request(`${url}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(JSON.parse(text) as { id: string }) : reject(new Error(`${path}: ${res.statusCode} ${text}`))))
      })
      req.on('error', reject)
      req.end(data)
    })
}

/** POST with Node's fetch (undici), which adds about a millisecond of its own. */
function fetchPoster(url: string): Post {
  return async (path, body) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { id: string }
  }
}

/**
 * `count` times: `client` waits in watch_annotations, `post` adds an annotation to `sessionId`
 * (over REST, on the same server or another); the time from the POST to the watch's answer, ms.
 */
export async function measureWake(client: Client, post: Post, sessionId: string, count: number): Promise<number[]> {
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const watching = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 10_000 } }) as Promise<CallToolResult>
    await sleep(20) // let the call reach the server and start waiting
    const t0 = performance.now()
    const { sessionId: _s, ...body } = realisticAnnotation(sessionId, i)
    const posted = post(`/api/sessions/${sessionId}/annotations`, body)
    const result = await watching
    latencies.push(performance.now() - t0)
    const added = await posted
    const got = result.structuredContent as { status: string; annotations?: { id: string }[] }
    if (got.status !== 'annotations' || got.annotations?.[0]?.id !== added.id) throw new Error('watch did not return the posted annotation')
    await client.callTool({ name: 'acknowledge', arguments: { id: added.id } })
  }
  return latencies
}

export interface WakeFigures {
  p50: number
  p99: number
  fetchP50: number
  runs: number
}

export async function wakeOneProcess(smoke: boolean): Promise<WakeFigures> {
  const runs = smoke ? 3 : 200
  const dir = tempDir()
  const { url, child } = await startServe(dir)
  const client = new Client({ name: 'bench', version: '1.0.0' })
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
    const session = await httpPoster(url)('/api/sessions', { url: 'http://localhost:5173/checkout' })
    const lean = await measureWake(client, httpPoster(url), session.id, runs)
    const viaFetch = await measureWake(client, fetchPoster(url), session.id, smoke ? 2 : 60)
    return { p50: median(lean), p99: percentile(lean, 99), fetchP50: median(viaFetch), runs }
  } finally {
    await client.close().catch(() => {})
    child.kill('SIGTERM')
  }
}
