/** Issue 16: a stdio line over the SDK's 10 MiB limit stops `marginalia mcp` with a reason and a non-zero exit. */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'
import { testDir } from '../helpers/store.js'
import { useCleanups } from '../helpers/cleanup.js'

const cleanups = useCleanups()

it('a 10.5 MiB stdio line: the reason on stderr, an error reply, the store closed, exit code 1', async () => {
  const { dir } = testDir(cleanups)
  const child = spawn(process.execPath, [CLI, 'mcp', '--store', path.join(dir, 'store.json')], { stdio: ['pipe', 'pipe', 'pipe'] })
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stdin.on('error', () => {}) // the server may stop reading before the whole line is written
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  await new Promise<void>((resolve) => {
    const check = () => (stderr.includes('MCP over stdio') ? resolve() : setTimeout(check, 20))
    check()
  })
  const big = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(10.5 * 1024 * 1024)}"}}\n`
  child.stdin.write(big)
  const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))])
  expect(code).toBe(1)
  expect(stderr).toMatch(/a message over 10 MiB was received; the MCP SDK closed the connection/)
  expect(stderr).toMatch(/stopping \(the stdio transport closed/)
  const reply = JSON.parse(stdout.trim().split('\n').pop()!) as { error: { code: number } }
  expect(reply.error.code).toBe(-32600)
}, 30_000)
