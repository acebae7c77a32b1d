/** Scenario 1: `marginalia serve`; an MCP client over Streamable HTTP waits; a REST POST wakes it. */
import { spawn, type ChildProcess } from 'node:child_process'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { CLI, median, percentile, realisticAnnotation, sleep, tempDir } from './lib.js'

/** Start the bundled `marginalia serve --port 0` in `dir`; resolve with its base URL. */
export async function startServe(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
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

export async function wakeOneProcess(smoke: boolean): Promise<{ p50: number; p99: number; runs: number }> {
  const runs = smoke ? 3 : 200
  const dir = tempDir()
  const { url, child } = await startServe(dir)
  const client = new Client({ name: 'bench', version: '1.0.0' })
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
      return (await res.json()) as { id: string }
    }
    const session = await post('/api/sessions', { url: 'http://localhost:5173/checkout' })
    const latencies: number[] = []
    for (let i = 0; i < runs; i++) {
      const watching = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 10_000 } }) as Promise<CallToolResult>
      await sleep(20) // let the call reach the server and start waiting
      const t0 = performance.now()
      const { sessionId: _s, ...body } = realisticAnnotation(session.id, i)
      const added = await post(`/api/sessions/${session.id}/annotations`, body)
      const result = await watching
      latencies.push(performance.now() - t0)
      const got = result.structuredContent as { status: string; annotations?: { id: string }[] }
      if (got.status !== 'annotations' || got.annotations?.[0]?.id !== added.id) throw new Error('watch did not return the posted annotation')
      await client.callTool({ name: 'acknowledge', arguments: { id: added.id } })
    }
    return { p50: median(latencies), p99: percentile(latencies, 99), runs }
  } finally {
    await client.close().catch(() => {})
    child.kill('SIGTERM')
  }
}
