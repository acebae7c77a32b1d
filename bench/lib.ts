/** Small helpers for the benchmark: timing, statistics, processes, fixtures. */
import { mkdtempSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore, type Store } from '../src/index.js'

export const ROOT = path.resolve(import.meta.dirname, '..')
export const CLI = path.join(ROOT, 'dist', 'marginalia.mjs')

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}
export const median = (values: number[]) => percentile(values, 50)
export const round = (n: number, digits = 2) => Number(n.toFixed(digits))

const temps: string[] = []
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'marginalia-bench-'))
  temps.push(dir)
  return dir
}
export function cleanupTemps(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true })
}

export function storeFileIn(dir: string): string {
  return path.join(dir, '.marginalia', 'store.json')
}

/** A realistic annotation, as the overlay sends it: comment, selector, snippet, trimmed HTML. */
export function realisticAnnotation(sessionId: string, i: number) {
  return {
    sessionId,
    comment: `The submit button overlaps the footer on narrow screens; it should sit above it with 16px spacing (#${i})`,
    url: 'http://localhost:5173/checkout',
    element: {
      selector: `main > form.checkout > div:nth-child(${(i % 9) + 1}) > button.btn.btn-primary`,
      path: 'html > body > div#root > main > form.checkout > div > button',
      tag: 'button',
      text: 'Submit order',
      html: `<button class="btn btn-primary" type="submit" data-testid="submit-${i}"><span class="icon icon-cart"></span> Submit order</button>`,
      rect: { x: 24, y: 812 + (i % 40), width: 342, height: 48 },
    },
    viewport: { width: 390, height: 844 },
    intent: 'fix' as const,
    severity: 'important' as const,
  }
}

/** Create a store file with `count` pending annotations in one session; returns the file. */
export async function seedStore(dir: string, count: number): Promise<{ file: string; sessionId: string; ids: string[] }> {
  const file = storeFileIn(dir)
  const store = await openStore({ file, pollIntervalMs: 0 })
  const session = await store.createSession({ url: 'http://localhost:5173/checkout', name: 'bench' })
  const ids: string[] = []
  for (let i = 0; i < count; i += 2_000) {
    const batch = await Promise.all(Array.from({ length: Math.min(2_000, count - i) }, (_, j) => store.addAnnotation(realisticAnnotation(session.id, i + j))))
    ids.push(...batch.map((a) => a.id))
  }
  await store.close()
  return { file, sessionId: session.id, ids }
}

export interface StdioServer {
  client: Client
  pid: number
  call(name: string, args?: Record<string, unknown>): Promise<{ result: CallToolResult; bytes: number; ms: number }>
  close(): Promise<void>
}

/** Spawn the built `marginalia mcp` in `dir` and connect an SDK client over stdio. */
export async function spawnMcp(dir: string, extraArgs: readonly string[] = [], cli: string = CLI): Promise<StdioServer> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...extraArgs], cwd: dir, stderr: 'ignore' })
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(transport)
  let id = 0
  return {
    client,
    pid: transport.pid!,
    async call(name, args = {}) {
      const t0 = performance.now()
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as CallToolResult
      const ms = performance.now() - t0
      // Bytes of the response line on the wire (JSON-RPC envelope + newline), counted when first
      // read: a caller timing several calls reads them after its clock stops, so the count (a
      // stringify of the whole response) is not part of what it times.
      const callId = ++id
      let bytes: number | undefined
      return {
        result,
        ms,
        get bytes() {
          return (bytes ??= Buffer.byteLength(JSON.stringify({ result, jsonrpc: '2.0', id: callId })) + 1)
        },
      }
    },
    async close() {
      await client.close()
    },
  }
}

export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

export async function withStore<T>(file: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ file })
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}
