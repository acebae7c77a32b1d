/**
 * `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
 * against our server, twice, every scenario of every suite:
 *   1. the shipped `marginalia serve` (the bundled CLI) — fixture scenarios are expected to fail,
 *      see conformance/product-expected-failures.yml;
 *   2. the same server with the suite's test_* fixtures added (test/conformance, test-only) —
 *      no failure expected.
 * Fails on any unexpected failure (or on a stale expected failure). And it is honest about what
 * passed: every scenario's checks are read back (`--output-dir`), and
 *   - run 1 names the scenarios the shipped server must pass (PRODUCT_PASSES); each needs at least
 *     one successful check and none failed; a scenario that "passed" only by meeting UNKNOWN_TOOL
 *     (a fixture tool the product does not have) is not counted as a pass;
 *   - a scenario that ran zero checks (only INFO/WARNING) fails, unless it is named in INCONCLUSIVE
 *     with the reason;
 *   - warnings are printed, with their messages;
 *   - a scenario in neither list fails as unclassified (a new suite version must be looked at).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '..')
const CONFORMANCE = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs')

/** Scenarios the shipped server (no fixtures) must pass for real. */
const PRODUCT_PASSES = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
]

/** Scenarios that call a fixture the product does not define: they must not count as passes there. */
const PRODUCT_FIXTURE_ONLY = ['tools-call-simple-text', 'tools-call-error']

/** Scenarios that can run no pass/fail check against this server, and why (printed, never counted). */
const INCONCLUSIVE: Record<string, string> = {
  'server-sse-polling':
    'the suite posts with MCP-Protocol-Version 2025-03-26, and the SDK sends the priming event and honours closeSSEStream only for 2025-11-25 and later: the scenario can only warn',
}

interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED'
  errorMessage?: string
  details?: unknown
}

interface ScenarioResult {
  name: string
  passed: number
  failed: number
  warnings: Check[]
  unknownTool: boolean
}

/** Every scenario's checks, as the suite wrote them (`<dir>/server-<scenario>-<timestamp>/checks.json`). */
function readResults(dir: string): ScenarioResult[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((d) => existsSync(path.join(dir, d, 'checks.json')))
    .map((d) => {
      const checks = JSON.parse(readFileSync(path.join(dir, d, 'checks.json'), 'utf8')) as Check[]
      const name = d.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '')
      return {
        name,
        passed: checks.filter((c) => c.status === 'SUCCESS').length,
        failed: checks.filter((c) => c.status === 'FAILURE').length,
        warnings: checks.filter((c) => c.status === 'WARNING'),
        unknownTool: checks.some((c) => /UNKNOWN_TOOL|Unknown tool/.test(JSON.stringify(c))),
      }
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * What the suite's own exit code does not say: vacuous passes, zero-check scenarios, warnings,
 * product scenarios that must pass. Returns the problems (empty: honest pass).
 */
function judge(results: ScenarioResult[], mode: 'product' | 'fixtures', expectedFailures: ReadonlySet<string>): string[] {
  const problems: string[] = []
  const seen = new Set(results.map((r) => r.name))
  for (const r of results) {
    for (const w of r.warnings) process.stdout.write(`  warning  ${r.name} / ${w.id}: ${w.errorMessage ?? ''}\n`)
    if (mode === 'product' && expectedFailures.has(r.name)) continue // the suite's baseline check covers these
    if (r.name in INCONCLUSIVE) {
      if (r.passed > 0 || r.failed > 0) problems.push(`${r.name} is listed as inconclusive but ran ${r.passed + r.failed} checks: take it out of INCONCLUSIVE`)
      else process.stdout.write(`  not counted  ${r.name}: ${INCONCLUSIVE[r.name]}\n`)
      continue
    }
    if (mode === 'product' && PRODUCT_FIXTURE_ONLY.includes(r.name)) {
      if (r.unknownTool) process.stdout.write(`  not counted  ${r.name}: met only UNKNOWN_TOOL (it calls a test_* fixture)\n`)
      else problems.push(`${r.name} no longer meets UNKNOWN_TOOL on the product: classify it again`)
      continue
    }
    if (mode === 'product' && !PRODUCT_PASSES.includes(r.name)) {
      problems.push(`${r.name}: unclassified scenario (add it to PRODUCT_PASSES, PRODUCT_FIXTURE_ONLY or the expected failures)`)
      continue
    }
    if (r.unknownTool) problems.push(`${r.name}: met UNKNOWN_TOOL, so its pass says nothing`)
    else if (r.passed === 0 && r.failed === 0) problems.push(`${r.name}: ran zero checks`)
    else if (r.failed > 0) problems.push(`${r.name}: ${r.failed} checks failed`)
  }
  if (mode === 'product') for (const name of PRODUCT_PASSES) if (!seen.has(name)) problems.push(`${name}: expected to pass on the product, but the suite did not run it`)
  return problems
}

function expectedFailuresOf(file: string | undefined): Set<string> {
  if (!file) return new Set()
  return new Set([...readFileSync(file, 'utf8').matchAll(/^\s*-\s*([\w-]+)/gm)].map((m) => m[1]!))
}

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

function runSuite(url: string, cwd: string, outputDir: string, expectedFailures?: string): Promise<number> {
  const args = [CONFORMANCE, 'server', '--url', `${url}/mcp`, '--suite', 'all', '--output-dir', outputDir]
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

async function run(name: string, mode: 'product' | 'fixtures', server: Promise<{ url: string; child: ChildProcess }>, cwd: string, expected?: string): Promise<number> {
  process.stdout.write(`\n### ${name}\n`)
  const { url, child } = await server
  try {
    const outputDir = path.join(cwd, `results-${mode}`)
    const code = await runSuite(url, cwd, outputDir, expected)
    const results = readResults(outputDir)
    const problems = results.length === 0 ? ['the suite wrote no results'] : judge(results, mode, expectedFailuresOf(expected))
    for (const p of problems) process.stdout.write(`  ✗ ${p}\n`)
    const counted = results.filter((r) => r.passed > 0 && r.failed === 0 && !r.unknownTool).length
    process.stdout.write(`### ${name}: ${code === 0 && problems.length === 0 ? 'OK' : `FAILED (suite exit ${code}, ${problems.length} problems)`} — ${counted} of ${results.length} scenarios passed with real checks\n`)
    return code === 0 && problems.length === 0 ? 0 : 1
  } finally {
    child.kill('SIGTERM')
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'marginalia-conformance-'))
try {
  const product = await run(
    'the shipped marginalia serve (fixture scenarios expected to fail)',
    'product',
    start([path.join(ROOT, 'dist', 'marginalia.mjs'), 'serve', '--port', '0', '--store', path.join(work, 'store.json')], work, 'stderr'),
    work,
    path.join(ROOT, 'conformance', 'product-expected-failures.yml'),
  )
  const fixtures = await run('marginalia serve with the test_* fixtures (no failure expected)', 'fixtures', start([TSX, path.join(ROOT, 'test', 'conformance', 'fixture-server.ts')], work, 'stdout'), work)
  process.exitCode = product === 0 && fixtures === 0 ? 0 : 1
} finally {
  rmSync(work, { recursive: true, force: true })
}
