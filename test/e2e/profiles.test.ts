import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { tempDir } from '../helpers/store.js'
import { ChildTransport } from '../helpers/child-transport.js'
import { useCleanups } from '../helpers/cleanup.js'

const CLI = path.resolve(import.meta.dirname, '../../dist/marginalia.mjs')
const cleanups = useCleanups()

function start(dir: string, ...args: string[]) {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, MARGINALIA_STORE: '' } })
  cleanups.push(() => child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d))
  return { child, stderr: () => stderr }
}

describe('marginalia mcp --profile/--allow/--deny (built, over stdio)', () => {
  it('--profile read-only lists only the read-only tools and refuses the others', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const { child, stderr } = start(dir, '--profile', 'read-only')
    const client = new Client({ name: 'e2e', version: '1.0.0' })
    await client.connect(new ChildTransport(child))
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['list_sessions', 'get_session', 'get_pending', 'get_all_pending', 'get_annotation', 'watch_annotations', 'get_changes', 'watch_changes', 'await_reply'])
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)
    const refused = (await client.callTool({ name: 'acknowledge', arguments: { id: 'ann_1' } })) as CallToolResult
    expect(refused.isError).toBe(true)
    expect(refused._meta).toMatchObject({ 'marginalia/error': { code: 'UNKNOWN_TOOL' } })
    expect(stderr()).toContain('tool profile read-only')

    const exited = once(child, 'exit')
    child.stdin.end()
    expect((await exited)[0]).toBe(0)
  })

  it('--allow and --deny shape the list', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const { child } = start(dir, '--deny', 'dismiss,reply', '--deny', 'resolve')
    const client = new Client({ name: 'e2e', version: '1.0.0' })
    await client.connect(new ChildTransport(child))
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_sessions', 'get_session', 'get_pending', 'get_all_pending', 'get_annotation', 'acknowledge', 'watch_annotations', 'get_changes', 'watch_changes', 'ask', 'await_reply'])
    const exited = once(child, 'exit')
    child.stdin.end()
    expect((await exited)[0]).toBe(0)
  })

  it('bad values: a clear message, a non-zero exit, and no store file created', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const run = async (...args: string[]) => {
      const { child, stderr } = start(dir, ...args)
      const [code] = await once(child, 'exit')
      return { code: code as number, err: stderr() }
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
    const child = spawn(process.execPath, [CLI, 'mcp', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
    for (const flag of ['--profile NAME', '--allow a,b', '--deny a,b', 'default, read-only, full']) expect(out).toContain(flag)
  })
})
