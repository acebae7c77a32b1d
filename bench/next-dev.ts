/**
 * `next dev` start-up with and without Marginalia: the create-next-app fixture
 * (test/fixtures/frameworks/next-app, installed by `npm run fixtures next-app`), cold each time
 * (.next removed), from spawn to the first page served with its content. "With" is the fixture
 * as `marginalia init` leaves it (withMarginalia in next.config.ts, instrumentation-client.ts);
 * the fixture's own files are restored afterwards. Runs alternate, so a busy machine weighs on both.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CLI, median, ROOT, sleep } from './lib.js'
import { freePort } from '../test/helpers/ports.js'

const APP = path.join(ROOT, 'test', 'fixtures', 'frameworks', 'next-app')

/** Milliseconds from spawning `next dev` (cold) to the first page with its content. */
async function coldStart(): Promise<number> {
  rmSync(path.join(APP, '.next'), { recursive: true, force: true })
  const port = await freePort()
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_ENV'))
  const t0 = performance.now()
  const child = spawn(process.execPath, [path.join(APP, 'node_modules/next/dist/bin/next'), 'dev', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: APP,
    env: { ...env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: 'ignore',
    detached: true,
  })
  try {
    for (const deadline = t0 + 120_000; performance.now() < deadline; await sleep(50)) {
      const res = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined)
      if (res?.ok && (await res.text()).includes('fruit-pear')) return performance.now() - t0
    }
    throw new Error('next dev served no page within 120 s')
  } finally {
    const closed = once(child, 'close')
    process.kill(-child.pid!, 'SIGKILL')
    await closed
  }
}

export async function nextDevStartup(runs: number): Promise<{ without: number; with: number }> {
  if (!existsSync(path.join(APP, 'node_modules', 'next'))) throw new Error(`${APP} is not installed: run npm run fixtures next-app`)
  // What init changes (restored) and adds (removed).
  const changed = new Map(['next.config.ts', '.gitignore'].map((f) => [f, readFileSync(path.join(APP, f))]))
  const added = ['instrumentation-client.ts', '.mcp.json', '.cursor', '.vscode', '.marginalia']
  const without: number[] = []
  const withIt: number[] = []
  const setUp = async (on: boolean): Promise<void> => {
    for (const [f, bytes] of changed) writeFileSync(path.join(APP, f), bytes)
    for (const f of added) rmSync(path.join(APP, f), { recursive: true, force: true })
    if (on) await once(spawn(process.execPath, [CLI, 'init', '--yes'], { cwd: APP, stdio: 'ignore' }), 'exit')
  }
  try {
    for (let i = 0; i < runs; i++) {
      await setUp(false)
      without.push(await coldStart())
      await setUp(true)
      withIt.push(await coldStart())
    }
  } finally {
    await setUp(false)
    rmSync(path.join(APP, '.next'), { recursive: true, force: true })
  }
  return { without: median(without), with: median(withIt) }
}
