import { describe, expect, it } from 'vitest'
import type { Annotation } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, errorOf, structured } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { BUILTIN_NAMES, MUTATING_NAMES, READ_ONLY_NAMES } from '../../helpers/tools.js'

const closers = useCleanups()

async function setup() {
  const store = memoryStore()
  const s1 = await store.createSession({ url: 'http://localhost:5173/', name: 'home' })
  const s2 = await store.createSession({ url: 'http://localhost:5173/cart' })
  const a1 = await store.addAnnotation({ sessionId: s1.id, comment: 'Button overlaps the footer', element: { selector: '#buy', text: 'Buy' } })
  const a2 = await store.addAnnotation({ sessionId: s2.id, comment: 'Total is not bold', intent: 'change', severity: 'suggestion' })
  const a3 = await store.addAnnotation({ sessionId: s1.id, comment: 'Logo is blurry' })
  const mcp = await connect(store)
  closers.push(() => mcp.close())
  return { store, mcp, s1, s2, a1, a2, a3 }
}

type Summary = { id: string; comment: string; selector?: string; text?: string; replyCount: number }
type List = { annotations: Summary[]; count: number; total: number; nextCursor?: string }

describe('tools/list', () => {
  it('lists the tools, each with description, input schema and annotations, and an output schema unless its answer is its line', async () => {
    const { mcp } = await setup()
    const { tools } = await mcp.client.listTools()
    expect(tools.map((t) => t.name)).toEqual(BUILTIN_NAMES)
    for (const t of tools) {
      expect(t.title).toBeUndefined() // the names read as words: a client shows them
      expect(t.description!.length).toBeGreaterThan(40)
      expect(t.inputSchema.type).toBe('object')
      // A mutation answers in one line (its structuredContent keeps the record): no output schema to demand or check.
      expect(t.outputSchema?.type ?? 'none', t.name).toBe(['acknowledge', 'resolve', 'dismiss', 'reply'].includes(t.name) ? 'none' : 'object')
      expect(t.annotations).not.toHaveProperty('title')
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    // Each tool's hint reaches the client: true for the queries and watches, false (stated, not left out) for the rest.
    for (const q of READ_ONLY_NAMES) expect(byName[q]!.annotations!.readOnlyHint, q).toBe(true)
    // Not read-only: readOnlyHint left at its default (false), and whether the change is destructive said.
    for (const m of MUTATING_NAMES) expect([byName[m]!.annotations!.readOnlyHint ?? false, typeof byName[m]!.annotations!.destructiveHint], m).toEqual([false, 'boolean'])
    expect(READ_ONLY_NAMES.length * MUTATING_NAMES.length).toBeGreaterThan(0)
    expect(byName.dismiss!.inputSchema.required).toEqual(['id', 'reason'])
    expect(byName.watch_annotations!.inputSchema.properties).toHaveProperty('timeoutMs')
  })

  it('the server instructions teach the work loop', async () => {
    const { mcp } = await setup()
    const text = mcp.client.getInstructions() ?? ''
    expect(text).toMatch(/watch_annotations[\s\S]*acknowledge[\s\S]*resolve[\s\S]*watch_annotations again/)
  })
})

describe('query tools', () => {
  it('list_sessions returns every session, oldest first', async () => {
    const { mcp, s1, s2 } = await setup()
    const r = await mcp.call('list_sessions')
    expect(r.isError).toBeFalsy()
    expect(structured<{ sessions: { id: string }[] }>(r).sessions.map((s) => s.id)).toEqual([s1.id, s2.id])
    expect(JSON.parse((r.content as { text: string }[])[0]!.text)).toEqual(r.structuredContent)
    expect((r.content as { text: string }[])[0]!.text).not.toContain('\n') // compact
  })

  it('get_session returns the session with its annotations; unknown id → NOT_FOUND', async () => {
    const { mcp, s1, a1, a3 } = await setup()
    const ok = structured<{ session: { id: string }; annotations: Summary[] }>(await mcp.call('get_session', { id: s1.id }))
    expect(ok.session.id).toBe(s1.id)
    expect(ok.annotations.map((a) => a.id)).toEqual([a1.id, a3.id])
    const err = errorOf(await mcp.call('get_session', { id: 'ses_missing' }))
    expect(err.code).toBe('NOT_FOUND')
    expect(err.message).toContain('ses_missing')
  })

  it('get_pending returns one session’s pending annotations; unknown session → NOT_FOUND', async () => {
    const { mcp, store, s1, a1, a3 } = await setup()
    await store.acknowledge(a1.id)
    const r = structured<List>(await mcp.call('get_pending', { sessionId: s1.id }))
    expect(r.annotations.map((a) => a.id)).toEqual([a3.id])
    expect(errorOf(await mcp.call('get_pending', { sessionId: 'nope' })).code).toBe('NOT_FOUND')
  })

  it('get_all_pending returns pending annotations of all sessions, oldest first', async () => {
    const { mcp, a1, a2, a3 } = await setup()
    const r = structured<List>(await mcp.call('get_all_pending'))
    expect(r.annotations.map((a) => a.id)).toEqual([a1.id, a2.id, a3.id])
    expect(r.count).toBe(3)
    expect(r.annotations[0]).toMatchObject({ selector: '#buy', text: 'Buy', replyCount: 0 })
  })
})

describe('command tools', () => {
  it('acknowledge takes a pending annotation; a message becomes an agent reply', async () => {
    const { mcp, store, a1 } = await setup()
    const r = structured<{ annotation: Annotation }>(await mcp.call('acknowledge', { id: a1.id, message: 'Fixing the z-index' }))
    expect(r.annotation.status).toBe('acknowledged')
    expect(r.annotation.replies).toMatchObject([{ author: 'agent', message: 'Fixing the z-index' }])
    expect(store.getAnnotation(a1.id).status).toBe('acknowledged')
  })

  it('acknowledge refuses anything not pending (no double processing) and unknown ids', async () => {
    const { mcp, store, a1, a2, a3 } = await setup()
    await mcp.call('acknowledge', { id: a1.id })
    await store.resolve(a2.id)
    await store.dismiss(a3.id, { reason: 'no' })
    for (const [id, status] of [
      [a1.id, 'acknowledged'],
      [a2.id, 'resolved'],
      [a3.id, 'dismissed'],
    ] as const) {
      const err = errorOf(await mcp.call('acknowledge', { id }))
      expect(err.code).toBe('INVALID_TRANSITION')
      expect(err.message).toContain(
        status === 'acknowledged'
          ? 'it is already acknowledged, by you or another agent. If it is yours, go on with resolve, reply or dismiss; otherwise pick another pending annotation.'
          : `it is ${status}, so it is finished; nothing to do — the person can reopen it.`,
      )
      expect(err.details).toMatchObject({ currentStatus: status })
    }
    expect(errorOf(await mcp.call('acknowledge', { id: 'ann_missing' })).code).toBe('NOT_FOUND')
  })

  it('resolve from any status; the summary becomes an agent reply', async () => {
    const { mcp, a1, a2 } = await setup()
    await mcp.call('acknowledge', { id: a1.id })
    const r = structured<{ annotation: Annotation }>(await mcp.call('resolve', { id: a1.id, summary: 'Raised the footer z-index' }))
    expect(r.annotation).toMatchObject({ status: 'resolved', replies: [{ message: 'Raised the footer z-index', author: 'agent' }] })
    const direct = structured<{ annotation: Annotation }>(await mcp.call('resolve', { id: a2.id }))
    expect(direct.annotation).toMatchObject({ status: 'resolved', replies: [] })
    expect(errorOf(await mcp.call('resolve', { id: 'ann_missing' })).code).toBe('NOT_FOUND')
  })

  it('dismiss needs a non-empty reason, which becomes an agent reply', async () => {
    const { mcp, store, a1 } = await setup()
    for (const reason of ['', '   ']) {
      const err = errorOf(await mcp.call('dismiss', { id: a1.id, reason }))
      expect(err.code).toBe('INVALID_PARAMS')
      expect(err.message).toContain('reason')
    }
    expect(errorOf(await mcp.call('dismiss', { id: a1.id })).code).toBe('INVALID_PARAMS')
    expect(store.getAnnotation(a1.id).status).toBe('pending')
    const r = structured<{ annotation: Annotation }>(await mcp.call('dismiss', { id: a1.id, reason: 'Intended: the footer is sticky' }))
    expect(r.annotation).toMatchObject({ status: 'dismissed', replies: [{ author: 'agent', message: 'Intended: the footer is sticky' }] })
    expect(errorOf(await mcp.call('dismiss', { id: 'ann_missing', reason: 'x' })).code).toBe('NOT_FOUND')
  })

  it('reply appends an agent reply without changing status; unknown id → NOT_FOUND', async () => {
    const { mcp, a1 } = await setup()
    const r = structured<{ annotation: Annotation }>(await mcp.call('reply', { id: a1.id, message: 'Which footer, the page or the modal?' }))
    expect(r.annotation).toMatchObject({ status: 'pending', replies: [{ author: 'agent', message: 'Which footer, the page or the modal?' }] })
    expect(errorOf(await mcp.call('reply', { id: 'ann_missing', message: 'x' })).code).toBe('NOT_FOUND')
    expect(errorOf(await mcp.call('reply', { id: a1.id, message: '' })).code).toBe('INVALID_PARAMS')
  })

  it('bad arguments are INVALID_PARAMS naming the field; unknown tools say which exist', async () => {
    const { mcp } = await setup()
    const wrongType = errorOf(await mcp.call('get_session', { id: 42 }))
    expect(wrongType).toMatchObject({ code: 'INVALID_PARAMS' })
    expect(wrongType.message).toContain('id')
    const extra = errorOf(await mcp.call('get_all_pending', { bogus: true }))
    expect(extra.code).toBe('INVALID_PARAMS')
    expect(extra.message).toContain('bogus')
    const unknown = errorOf(await mcp.call('delete_everything'))
    expect(unknown.code).toBe('UNKNOWN_TOOL')
    expect(unknown.message).toContain('watch_annotations')
  })
})
