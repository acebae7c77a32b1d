/** Honest presence: an MCP session counts as connected only while it has something open or was heard from lately; stdio agents in other processes count through their presence file. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { PRESENCE_RECENT_MS, PresenceTracker, countStdioAgents, type Presence } from '../../../src/http/presence.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openStore } from '../../../src/store/index.js'
import { CLI, runCli } from '../../helpers/cli.js'
import { eventually } from '../../helpers/eventually.js'
import { tempDir } from '../../helpers/store.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('PresenceTracker', () => {
  it('a session left without DELETE stops counting as connected RECENT_MS after its last request, and says so', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') })
    const tracker = new PresenceTracker()
    const seen: boolean[] = []
    const sub = tracker.presence$.subscribe((p: Presence) => seen.push(p.connected))
    tracker.sessionOpened()
    tracker.streamOpened()
    tracker.streamClosed()
    expect(tracker.current()).toMatchObject({ connected: true, sessions: 1 })
    vi.advanceTimersByTime(PRESENCE_RECENT_MS - 1_000)
    expect(tracker.current().connected).toBe(true)
    vi.advanceTimersByTime(2_000)
    expect(tracker.current()).toMatchObject({ connected: false, sessions: 1 })
    expect(seen).toEqual([false, true, false]) // the overlay hears it go stale without any request
    // A request brings it back.
    tracker.streamOpened()
    expect(seen.at(-1)).toBe(true)
    // An open stream (a GET event stream, a long call) keeps it connected however long it lasts.
    vi.advanceTimersByTime(10 * PRESENCE_RECENT_MS)
    expect(tracker.current().connected).toBe(true)
    tracker.streamClosed()
    tracker.sessionClosed()
    expect(tracker.current().connected).toBe(false)
    sub.unsubscribe()
    tracker.complete()
  })
})

describe('stdio agents', () => {
  it('marginalia mcp leaves a presence file beside its store while it runs; files of dead processes do not count', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const storeDir = path.join(dir, '.marginalia')
      mkdirSync(path.join(storeDir, 'presence'), { recursive: true })
      writeFileSync(path.join(storeDir, 'presence', '999999999.json'), '{}') // no such process
      expect(countStdioAgents(storeDir)).toBe(0)
      expect(existsSync(path.join(storeDir, 'presence', '999999999.json'))).toBe(false)

      const child = spawn(process.execPath, [CLI, 'mcp'], { cwd: dir, env: { ...process.env, MARGINALIA_STORE: '', MARGINALIA_PORT: '1' }, stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`mcp did not start: ${stderr}`)), 15_000)
        child.stderr.on('data', (d: Buffer) => {
          stderr += d
          if (stderr.includes('MCP over stdio')) {
            clearTimeout(timer)
            resolve()
          }
        })
      })
      expect(countStdioAgents(storeDir)).toBe(1)
      const tracker = new PresenceTracker(undefined, { storeDir })
      expect(tracker.current()).toMatchObject({ connected: true, sessions: 0, stdio: 1 })
      tracker.complete()
      child.stdin.end()
      await once(child, 'exit')
      expect(countStdioAgents(storeDir)).toBe(0)
    } finally {
      cleanup()
    }
  })

  it('a stdio agent waiting in watch_annotations reads as listening, as an HTTP one does; --root gives it the source lines', { timeout: 30_000 }, async () => {
    const { dir, cleanup } = tempDir()
    const storeDir = path.join(dir, '.marginalia')
    const store = path.join(storeDir, 'store.json')
    writeFileSync(path.join(dir, 'Button.tsx'), 'export function Button() {\n  return <button>Buy</button>\n}\n')
    const client = new Client({ name: 'presence-test', version: '1.0.0' })
    try {
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', store, '--root', dir], env: { ...(process.env as Record<string, string>), MARGINALIA_STORE: '', MARGINALIA_PORT: '1' }, stderr: 'pipe' }))
      const read = (): Presence => {
        const tracker = new PresenceTracker(undefined, { storeDir })
        const p = tracker.current()
        tracker.complete()
        return p
      }
      expect(read()).toMatchObject({ connected: true, stdio: 1, watching: 0 })
      const watch = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } })
      await eventually(() => read().watching, 10_000).toBe(1)
      // The person annotates: the wait ends, and so does "listening".
      const writer = await openStore({ file: store })
      const session = await writer.createSession({ url: 'http://localhost:5173/' })
      const a = await writer.addAnnotation({ sessionId: session.id, comment: 'Buy is grey', source: { file: 'Button.tsx', line: 2, column: 10 } })
      await writer.close()
      await watch
      await eventually(() => read().watching, 10_000).toBe(0)
      const full = (await client.callTool({ name: 'get_annotation', arguments: { id: a.id } })).structuredContent as { sourceLines?: string }
      expect(full.sourceLines).toContain('> 2 |   return <button>Buy</button>')
    } finally {
      await client.close()
      cleanup()
    }
  })

  it('marginalia mcp --root refuses a folder that does not exist, naming it', async () => {
    const r = await runCli(['mcp', '--root', '/no/such/project'], process.cwd())
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('--root /no/such/project: no such directory')
    expect(r.stdout).toBe('')
  })
})
