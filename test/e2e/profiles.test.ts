import { describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { testDir } from '../helpers/store.js'
import { ChildTransport } from '../helpers/child-transport.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI, runCli } from '../helpers/cli.js'
import { spawnNode, type Spawned } from '../helpers/process.js'
import { BUILTIN_NAMES, READ_ONLY_NAMES, without } from '../helpers/tools.js'

const cleanups = useCleanups()

function start(dir: string, ...args: string[]) {
  return spawnNode(cleanups, [CLI, 'mcp', ...args], { cwd: dir, env: { MARGINALIA_STORE: '' } })
}

/** `marginalia mcp …args` in a fresh folder, with an SDK client connected to it. */
async function connected(...args: string[]) {
  const { dir } = testDir(cleanups)
  const mcp = start(dir, ...args)
  const client = new Client({ name: 'e2e', version: '1.0.0' })
  await client.connect(new ChildTransport(mcp.child))
  return { mcp, client }
}

/** Closing stdin stops it with exit code 0. */
async function stopped(mcp: Spawned): Promise<void> {
  mcp.child.stdin.end()
  expect(await mcp.exited()).toBe(0)
}

describe('marginalia mcp --profile/--allow/--deny (built, over stdio)', () => {
  it('--profile read-only lists only the read-only tools and refuses the others', async () => {
    const { mcp, client } = await connected('--profile', 'read-only')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(READ_ONLY_NAMES)
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)
    const refused = (await client.callTool({ name: 'acknowledge', arguments: { id: 'ann_1' } })) as CallToolResult
    expect(refused.isError).toBe(true)
    expect(refused._meta).toMatchObject({ 'marginalia/error': { code: 'UNKNOWN_TOOL' } })
    expect(mcp.stderr()).toContain('tool profile read-only')
    await stopped(mcp)
  })

  it('--allow and --deny shape the list', async () => {
    const { mcp, client } = await connected('--deny', 'dismiss,reply', '--deny', 'resolve')
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(without(BUILTIN_NAMES, 'dismiss', 'reply', 'resolve'))
    await stopped(mcp)
  })

  it('bad values: a clear message, a non-zero exit, and no store file created', async () => {
    const { dir } = testDir(cleanups)
    const run = async (...args: string[]) => {
      const mcp = start(dir, ...args)
      return { code: await mcp.exited(), err: mcp.stderr() }
    }
    const profile = await run('--profile', 'nope')
    expect(profile.code).not.toBe(0)
    expect(profile.err).toContain('--profile: "nope" is not a tool profile. Profiles: default')
    const allow = await run('--allow', 'get_session,unknown_tool')
    expect(allow.code).not.toBe(0)
    expect(allow.err).toContain('--allow: unknown tool "unknown_tool". Available tools: list_sessions, get_session, get_pending')
    const deny = await run('--deny', 'nope')
    expect(deny.code).not.toBe(0)
    expect(deny.err).toContain('--deny: unknown tool "nope"')
    const missing = await run('--profile')
    expect(missing.code).toBe(2)
    expect(missing.err).toContain("Option '--profile <value>' argument missing")
    expect(existsSync(path.join(dir, '.marginalia'))).toBe(false)
  })

  it('mcp --help documents the flags', async () => {
    const { code, stdout: out } = await runCli(['mcp', '--help'], process.cwd())
    expect(code).toBe(0)
    for (const flag of ['--profile NAME', '--allow a,b', '--deny a,b', 'default, read-only, full']) expect(out).toContain(flag)
  })
})
