import { describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore } from '../../src/index.js'
import { testDir } from '../helpers/store.js'
import { ChildTransport } from '../helpers/child-transport.js'
import { useCleanups } from '../helpers/cleanup.js'
import { CLI, runCli } from '../helpers/cli.js'
import { spawnNode } from '../helpers/process.js'

const cleanups = useCleanups()

describe('marginalia mcp (built, over stdio)', () => {
  it('serves the tools; an annotation added through the store API arrives through watch_annotations; closing stdin exits 0', async () => {
    const { dir } = testDir(cleanups)
    const mcp = spawnNode(cleanups, [CLI, 'mcp'], { cwd: dir, env: { MARGINALIA_STORE: '' } })
    const { child } = mcp

    const client = new Client({ name: 'e2e', version: '1.0.0' })
    await client.connect(new ChildTransport(child))
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('watch_annotations')

    // The default store: .marginalia/store.json in the server's working directory.
    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })

    // Whichever reaches the server first, the watch answers with the annotation: at once when it is
    // already pending, else when the write reaches the server's store.
    const watching = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 10_000 } }) as Promise<CallToolResult>
    await store.addAnnotation({ sessionId: session.id, comment: 'The hero image is cropped', element: { selector: '.hero img' } })
    const result = await watching
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ status: 'annotations', annotations: [{ comment: 'The hero image is cropped' }] })

    const ack = (await client.callTool({ name: 'acknowledge', arguments: { id: (result.structuredContent as { annotations: { id: string }[] }).annotations[0]!.id } })) as CallToolResult
    expect(ack.isError).toBeFalsy()
    await store.sync()
    expect(store.getAllPending()).toEqual([])

    child.stdin.end()
    expect(await mcp.exited()).toBe(0)
    expect(mcp.stderr()).toContain('stopping (stdin closed)')
  })

  it('walks every page of a long list, and a page after another process\'s write shows that write', async () => {
    const { dir } = testDir(cleanups)
    const store = await openStore({ file: path.join(dir, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const ids: string[] = []
    for (let i = 0; i < 250; i++) ids.push((await store.addAnnotation({ sessionId: session.id, comment: `Row ${i} is misaligned`, element: { selector: `tr:nth-child(${i + 1})` } })).id)
    const mcp = spawnNode(cleanups, [CLI, 'mcp'], { cwd: dir, env: { MARGINALIA_STORE: '' } })
    const client = new Client({ name: 'e2e', version: '1.0.0' })
    await client.connect(new ChildTransport(mcp.child))
    type Page = { annotations: { id: string }[]; nextCursor?: string; rev: number }
    const page = async (cursor?: string) => ((await client.callTool({ name: 'get_all_pending', arguments: cursor ? { cursor } : {} })) as CallToolResult).structuredContent as Page

    // A walk: every annotation once, in order.
    const walked: string[] = []
    for (let p: Page | undefined = await page(); p; p = p.nextCursor ? await page(p.nextCursor) : undefined) walked.push(...p.annotations.map((a) => a.id))
    expect(walked).toEqual(ids)

    // The server reads page two as soon as it has written page one. Another process then takes an
    // annotation of page two: the page the agent gets is read after that write.
    const first = await page()
    expect(first.nextCursor).toBeDefined()
    await client.callTool({ name: 'list_sessions', arguments: {} }) // the server has finished with page one
    await store.acknowledge(ids[150]!)
    const second = await page(first.nextCursor)
    expect(second.rev).toBe(store.rev)
    expect(second.annotations.map((a) => a.id)).toEqual(ids.slice(100, 201).filter((id) => id !== ids[150]))
    await client.close()
  })

  it('writes nothing but protocol on stdout', async () => {
    const { dir } = testDir(cleanups)
    const mcp = spawnNode(cleanups, [CLI, 'mcp', '--store', 'custom/store.json'], { cwd: dir })
    const { child } = mcp
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) + '\n')
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_sessions', arguments: {} } }) + '\n')
    // Both answers, then stdin closed: anything else it printed would be on stdout by its exit.
    await mcp.waitFor('stdout', /"id":2\b[^\n]*\n/)
    child.stdin.end()
    expect(await mcp.exited()).toBe(0)
    const lines = mcp.stdout().trim().split('\n')
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' })
  })

  it('exits cleanly on SIGTERM', async () => {
    const { dir } = testDir(cleanups)
    const mcp = spawnNode(cleanups, [CLI, 'mcp'], { cwd: dir })
    await mcp.waitFor('stderr', 'MCP over stdio')
    mcp.child.kill('SIGTERM')
    expect(await mcp.exited()).toBe(0)
  })

  it('marginalia archive moves finished annotations, reports, lists, and rejects a bad duration', async () => {
    const { dir } = testDir(cleanups)
    const file = path.join(dir, '.marginalia', 'store.json')
    const store = await openStore({ file })
    const s = await store.createSession({ url: 'http://x/' })
    const done = await store.addAnnotation({ sessionId: s.id, comment: 'done' })
    await store.addAnnotation({ sessionId: s.id, comment: 'still to do' })
    await store.resolve(done.id)
    await store.close()
    const run = async (...args: string[]) => {
      const { code, stdout: out, stderr: err } = await runCli(['archive', ...args], dir)
      return { code, out, err }
    }
    const first = await run('--older-than', '0')
    expect(first.code).toBe(0)
    expect(first.out).toMatch(/^Archived 1 annotation\(s\) to .*archive\/\d{4}-\d{2}-\d{2}\.jsonl\.$/m)
    expect((await run('--older-than', '0')).out).toBe('Nothing to archive.\n')
    expect((await run('--list')).out).toMatch(/\.jsonl\t1 annotation\(s\)/)
    const bad = await run('--older-than', 'soon')
    expect(bad.code).toBe(2)
    expect(bad.err).toContain('--older-than')
    const check = await openStore({ file })
    cleanups.push(() => check.close())
    expect(check.listAnnotations().map((a) => a.comment)).toEqual(['still to do'])
  })

  it('--help, --version, and a bad flag', async () => {
    const run = async (...args: string[]) => {
      const { code, stdout: out, stderr: err } = await runCli(args, process.cwd())
      return { code, out, err }
    }
    const help = await run('--help')
    expect(help.code).toBe(0)
    expect(help.out).toContain('mcp')
    const version = await run('--version')
    expect(version.out.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const bad = await run('mcp', '--nope')
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("Unknown option '--nope'")
    const unknown = await run('frobnicate')
    expect(unknown.code).toBe(2)
    expect(unknown.err).toContain('unknown command')
  })
})
