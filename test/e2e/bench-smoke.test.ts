import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')

describe('npm run bench (smoke)', () => {
  it('runs every scenario at tiny sizes and writes its figures', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'bench/run.ts', '--smoke'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    const [code] = await once(child, 'exit')
    expect(code, err).toBe(0)
    expect(out).toContain('| scenario | metric | median |')
    const results = JSON.parse(readFileSync(path.join(ROOT, 'bench', 'results', 'smoke.json'), 'utf8')) as { smoke: boolean; figures: { scenario: string; value: number }[] }
    expect(results.smoke).toBe(true)
    // The postgres rows appear when PostgreSQL is reachable (test/e2e/postgres covers them).
    const scenarios = new Set(results.figures.map((f) => f.scenario.split(',')[0]).filter((s) => !s!.startsWith('postgres')))
    expect([...scenarios].sort()).toEqual([
      'agent session',
      'capture',
      'element screenshot (Chromium)',
      'hook',
      'host page',
      'memory',
      'person → channel notification (marginalia mcp --channel',
      'person → watch line',
      'person → webhook delivered (healthy loopback receiver)',
      'query',
      'source marks',
      'start-up',
      'wake',
      'writes',
    ])
    for (const f of results.figures) expect(Number.isFinite(f.value)).toBe(true)
  }, 120_000)
})
