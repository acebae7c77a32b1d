import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, lstatSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_IDS, MAX_SESSIONS, agentOfClient, openToldLedger } from '../../../src/store/told.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'told-'))
  dirs.push(d)
  return d
}

describe('the told ledger', () => {
  it('answers which ids a session was not told, per session, with the agent-wide * counting for every session', () => {
    const dir = tempDir()
    const ledger = openToldLedger(dir)
    expect(ledger.untold('claude:s1', ['a', 'b'])).toEqual(['a', 'b'])
    ledger.markTold('claude:s1', ['a'])
    expect(ledger.untold('claude:s1', ['a', 'b'])).toEqual(['b'])
    expect(ledger.untold('claude:s2', ['a', 'b'])).toEqual(['a', 'b'])
    ledger.markTold('claude:*', ['b'])
    expect(ledger.untold('claude:s2', ['a', 'b'])).toEqual(['a'])
    expect(ledger.untold('claude:s2', ['a', 'b'], { agentWide: false })).toEqual(['a', 'b'])
    expect(ledger.untold('cursor:c1', ['a', 'b'])).toEqual(['a', 'b'])
    // another process reading the same folder sees the same
    expect(openToldLedger(dir).untold('claude:s1', ['a', 'b', 'c'])).toEqual(['c'])
  })

  it('stays bounded: the least recently told sessions and the oldest ids go first', () => {
    const dir = tempDir()
    let t = 0
    const ledger = openToldLedger(dir, () => ++t)
    for (let i = 0; i < MAX_SESSIONS + 5; i++) ledger.markTold(`codex:s${i}`, ['x'])
    expect(ledger.untold('codex:s0', ['x'])).toEqual(['x'])
    expect(ledger.untold(`codex:s${MAX_SESSIONS + 4}`, ['x'])).toEqual([])
    const ids = Array.from({ length: MAX_IDS + 10 }, (_, i) => `id${i}`)
    ledger.markTold('codex:big', ids)
    expect(ledger.untold('codex:big', ['id0', `id${MAX_IDS + 9}`])).toEqual(['id0'])
    const data = JSON.parse(readFileSync(ledger.file, 'utf8')) as { sessions: Record<string, unknown> }
    expect(Object.keys(data.sessions).length).toBeLessThanOrEqual(MAX_SESSIONS)
  })

  it('reads a damaged or hostile file as an empty ledger and never writes through a link', () => {
    const dir = tempDir()
    const ledger = openToldLedger(dir)
    writeFileSync(ledger.file, '{"sessions":{"claude:s1":{"at":"x","ids":[1]},"bad key":{"at":1,"ids":["a"]}}}')
    expect(ledger.untold('claude:s1', ['a'])).toEqual(['a'])
    writeFileSync(ledger.file, 'not json')
    expect(ledger.untold('claude:s1', ['a'])).toEqual(['a'])
    rmSync(ledger.file)
    const target = path.join(dir, 'target.txt')
    writeFileSync(target, 'keep')
    symlinkSync(target, ledger.file)
    expect(ledger.untold('claude:s1', ['a'])).toEqual(['a'])
    ledger.markTold('claude:s1', ['a'])
    expect(readFileSync(target, 'utf8')).toBe('keep')
    expect(lstatSync(ledger.file).isSymbolicLink()).toBe(false)
    expect(ledger.untold('claude:s1', ['a'])).toEqual([])
  })

  it('refuses a key that is not AGENT:SESSION, naming the form', () => {
    const ledger = openToldLedger(tempDir())
    expect(() => ledger.markTold('Claude', ['a'])).toThrow(/AGENT:SESSION/)
    expect(() => ledger.untold('claude:has space', ['a'])).toThrow(/AGENT:SESSION/)
    expect(existsSync(ledger.file)).toBe(false)
  })
})

describe('the agent of an MCP client', () => {
  it('is the name its hooks use, so a wait and a hook of the same agent share what was told', () => {
    expect(agentOfClient('claude-code')).toBe('claude')
    expect(agentOfClient('codex-mcp-client')).toBe('codex')
    expect(agentOfClient('cursor-vscode')).toBe('cursor')
    expect(agentOfClient('gemini-cli-mcp-client')).toBe('gemini')
    expect(agentOfClient('Visual Studio Code')).toBe('vscode')
    // Any other client keeps its own name in the ledger's alphabet; a name with nothing left is `mcp`.
    expect(agentOfClient('My Agent 2')).toBe('my-agent-2')
    expect(agentOfClient('∅∅')).toBe('mcp')
    expect(agentOfClient(undefined)).toBe('mcp')
    expect(agentOfClient('x'.repeat(100))).toHaveLength(32)
  })

  it('makes a key the ledger accepts, for any name a client may send', () => {
    const ledger = openToldLedger(tempDir())
    for (const name of ['claude-code', '', ' -- ', 'a:b c/d', '\u0000', 'Ünïcödé']) {
      const key = `${agentOfClient(name)}:*`
      ledger.markTold(key, ['ann_1'])
      expect(ledger.untold(`${agentOfClient(name)}:s1`, ['ann_1'])).toEqual([])
    }
  })
})
