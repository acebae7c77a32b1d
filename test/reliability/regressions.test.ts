/**
 * Regression tests for the bugs the reliability campaign found (issue #9). Each names the
 * campaign test that found it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { StoreFileError, ValidationError, createToolRegistry, openStore } from '../../src/index.js'
import { connect, errorOf } from '../helpers/mcp.js'
import { memoryStore, tempDir } from '../helpers/store.js'
import { populated } from './lib/hostile.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function client() {
  const store = memoryStore()
  const mcp = await connect(store)
  cleanups.push(() => mcp.close())
  return { store, mcp }
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

describe('errors never grow with hostile input (found by fuzz-tools: a 900 KB error reply)', () => {
  it('an unknown megabyte-long key is clipped in the INVALID_PARAMS message and details', async () => {
    const { mcp } = await client()
    const key = 'k'.repeat(1_000_000)
    const result = await mcp.call('get_all_pending', { [key]: 1 })
    const error = errorOf(result)
    expect(error.code).toBe('INVALID_PARAMS')
    expect(error.message).toMatch(/… \(100\d{4} characters\)/)
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('ten thousand unknown keys make one bounded message', async () => {
    const { mcp } = await client()
    const args = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`extra_${i}`, i]))
    const result = await mcp.call('list_sessions', args)
    expect(errorOf(result).code).toBe('INVALID_PARAMS')
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('an unknown tool name of 100 000 characters is clipped', async () => {
    const { mcp } = await client()
    const result = await mcp.call('x'.repeat(100_000))
    const error = errorOf(result)
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain('(100000 characters)')
    expect(bytes(result)).toBeLessThan(4_000)
  })

  it('ValidationError keeps at most 20 issues and says how many more there were', () => {
    const error = new ValidationError(Array.from({ length: 50 }, (_, i) => ({ path: `f${i}`, message: 'bad' })))
    expect(error.issues).toHaveLength(21)
    expect(error.issues.at(-1)!.message).toBe('and 30 more issue(s)')
  })

  it('a store error naming a huge id is clipped too', async () => {
    const store = memoryStore()
    const registry = createToolRegistry(store)
    const outcome = await registry.call('get_annotation', { id: 'a'.repeat(128) })
    expect(outcome.ok).toBe(false)
    await expect(store.acknowledge('z'.repeat(1_000_000))).rejects.toThrow(/\(1000000 characters\)/)
    const error = await store.acknowledge('z'.repeat(1_000_000)).catch((e: unknown) => e)
    expect(bytes(error)).toBeLessThan(2_000)
  })
})

describe('tools/call with arguments that are not an object (found by fuzz-tools: answered -32603 "internal error")', () => {
  it('is JSON-RPC InvalidParams (-32602), and the server keeps serving', async () => {
    const { mcp } = await client()
    for (const args of ['text', 42, [1, 2], true]) {
      const error = await mcp.client
        .request({ method: 'tools/call', params: { name: 'list_sessions', arguments: args as unknown as Record<string, unknown> } }, CallToolResultSchema)
        .then(() => null, (e: unknown) => e as { code?: number })
      expect(error?.code).toBe(-32602)
    }
    const ok = (await mcp.call('list_sessions')) as CallToolResult
    expect(ok.isError).toBeFalsy()
  })
})

describe('a store that cannot be opened leaves no file open (found by npm test: DEP0137 "Closing a FileHandle object on garbage collection")', () => {
  /** Open file descriptors of this process (Linux). */
  const openFds = () => readdirSync('/proc/self/fd').length

  it.skipIf(!existsSync('/proc/self/fd'))('a log event that does not fit the snapshot: openStore rejects naming the store and closes the log it had opened', async () => {
    const { file, cleanup } = tempDir('marginalia-regression-')
    cleanups.push(cleanup)
    await populated(file)
    const log = path.join(path.dirname(file), 'store.events.jsonl')
    const lines = readFileSync(log, 'utf8').split('\n')
    writeFileSync(log, [lines[0]!.replace(/"annotationId":"ann_/, '"annotationId":"an_'), ...lines.slice(1)].join('\n'))
    const before = openFds()
    for (let i = 0; i < 20; i++) {
      const error = await openStore({ file, pollIntervalMs: 0, watchFiles: false }).then(
        async (s) => {
          await s.close()
          return null
        },
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(StoreFileError)
    }
    expect(openFds()).toBe(before)
  })
})
