/**
 * `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
 * against our server, twice, every scenario of every suite:
 *   1. the shipped `marginalia serve` (the bundled CLI) — fixture scenarios are expected to fail,
 *      see conformance/product-expected-failures.yml;
 *   2. the same server with the suite's test_* fixtures added (test/conformance, test-only) —
 *      no failure expected.
 * Fails on any unexpected failure (or on a stale expected failure).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '..')
const CONFORMANCE = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs')

function start(command: string[], cwd: string, urlFrom: 'stdout' | 'stderr'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, command, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 30 s:\n${out}`)), 30_000)
    const look = (d: Buffer, stream: 'stdout' | 'stderr') => {
      out += d
      const m = stream === urlFrom ? /(http:\/\/127\.0\.0\.1:\d+)/.exec(out) : null
      if (m) {
        clearTimeout(timer)
        resolve({ url: m[1]!, child })
      }
    }
    child.stdout!.on('data', (d: Buffer) => look(d, 'stdout'))
    child.stderr!.on('data', (d: Buffer) => look(d, 'stderr'))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before starting:\n${out}`))
    })
  })
}

function runSuite(url: string, cwd: string, expectedFailures?: string): Promise<number> {
  const args = [CONFORMANCE, 'server', '--url', `${url}/mcp`, '--suite', 'all']
  if (expectedFailures) args.push('--expected-failures', expectedFailures)
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d))
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      // The per-scenario chatter is long; the summary says it all.
      const summary = out.slice(out.lastIndexOf('=== SUMMARY ==='))
      process.stdout.write(summary.length > 0 ? summary : out)
      resolve(code ?? 1)
    })
  })
}

async function run(name: string, server: Promise<{ url: string; child: ChildProcess }>, cwd: string, expected?: string): Promise<number> {
  process.stdout.write(`\n### ${name}\n`)
  const { url, child } = await server
  try {
    const code = await runSuite(url, cwd, expected)
    process.stdout.write(`### ${name}: ${code === 0 ? 'OK' : `FAILED (exit ${code})`}\n`)
    return code
  } finally {
    child.kill('SIGTERM')
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'marginalia-conformance-'))
try {
  const product = await run(
    'the shipped marginalia serve (fixture scenarios expected to fail)',
    start([path.join(ROOT, 'dist', 'marginalia.mjs'), 'serve', '--port', '0', '--store', path.join(work, 'store.json')], work, 'stderr'),
    work,
    path.join(ROOT, 'conformance', 'product-expected-failures.yml'),
  )
  const fixtures = await run('marginalia serve with the test_* fixtures (no failure expected)', start([TSX, path.join(ROOT, 'test', 'conformance', 'fixture-server.ts')], work, 'stdout'), work)
  process.exitCode = product === 0 && fixtures === 0 ? 0 : 1
} finally {
  rmSync(work, { recursive: true, force: true })
}
