/** What an MCP session hands its agent: which ids a wait's answer hands over, holding pushes while a wait runs, and the record kept without a ledger. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Deliveries, handedIds } from '../../../src/mcp/deliveries.js'
import { openToldLedger } from '../../../src/store/told.js'
import type { CallOutcome } from '../../../src/tools/registry.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const ok = (result: Record<string, unknown>): CallOutcome => ({ ok: true, result, text: '' })

describe('deliveries of an MCP session', () => {
  it('a wait hands over the pending annotations of its answer, and the created ones of a changes answer', () => {
    expect(handedIds(ok({ status: 'annotations', annotations: [{ id: 'a', status: 'pending' }, { id: 'b', status: 'acknowledged' }] }))).toEqual(['a'])
    expect(handedIds(ok({ events: [{ type: 'annotation.created', annotation: { id: 'c', status: 'pending' } }, { type: 'annotation.replied', annotationId: 'a' }] }))).toEqual(['c'])
    expect(handedIds(ok({ status: 'timeout' }))).toEqual([])
    expect(handedIds({ ok: false, error: { code: 'NOT_FOUND', message: 'x' } })).toEqual([])
  })

  it('holds pushes while a wait runs and records what it handed, in the ledger and for the session itself', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'deliveries-'))
    dirs.push(dir)
    const ledger = openToldLedger(dir)
    const d = new Deliveries(ledger)
    const pushes: string[] = []
    let finish: (o: CallOutcome) => void = () => {}
    const wait = d.wait('claude:*', () => new Promise<CallOutcome>((resolve) => (finish = resolve)))
    d.whenNoWait(() => pushes.push(d.told('claude:*', 'a') ? 'skipped a' : 'pushed a'))
    d.whenNoWait(() => pushes.push(d.told('claude:*', 'z') ? 'skipped z' : 'pushed z'))
    expect(pushes).toEqual([])
    finish(ok({ annotations: [{ id: 'a', status: 'pending' }] }))
    await wait
    expect(pushes).toEqual(['skipped a', 'pushed z'])
    expect(ledger.untold('claude:s9', ['a', 'z'])).toEqual(['z'])
    d.whenNoWait(() => pushes.push('now'))
    expect(pushes.at(-1)).toBe('now')
  })

  it('without a ledger (a PostgreSQL store) the session still knows what it handed', async () => {
    const d = new Deliveries(undefined)
    await d.wait('codex:*', () => Promise.resolve(ok({ annotations: [{ id: 'a', status: 'pending' }] })))
    expect(d.told('codex:*', 'a')).toBe(true)
    expect(d.told('codex:*', 'b')).toBe(false)
  })
})
