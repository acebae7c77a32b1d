/** A stdio line over the SDK's 10 MiB limit stops `marginalia mcp` with a reason and a non-zero exit. */
import path from 'node:path'
import { expect, it } from 'vitest'
import { CLI } from '../../helpers/cli.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { spawnNode } from '../../helpers/process.js'

const cleanups = useCleanups()

it('a 10.5 MiB stdio line: the reason on stderr, an error reply, the store closed, exit code 1', async () => {
  const { dir } = testDir(cleanups)
  const mcp = spawnNode(cleanups, [CLI, 'mcp', '--store', path.join(dir, 'store.json')])
  mcp.child.stdin.on('error', () => {}) // the server may stop reading before the whole line is written
  await mcp.waitFor('stderr', 'MCP over stdio')
  const big = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(10.5 * 1024 * 1024)}"}}\n`
  mcp.child.stdin.write(big)
  expect(await mcp.exited(15_000)).toBe(1)
  const stderr = mcp.stderr()
  expect(stderr).toMatch(/a message over 10 MiB was received; the MCP SDK closed the connection/)
  expect(stderr).toMatch(/stopping \(the stdio transport closed/)
  const reply = JSON.parse(mcp.stdout().trim().split('\n').pop()!) as { error: { code: number } }
  expect(reply.error.code).toBe(-32600)
}, 30_000)
