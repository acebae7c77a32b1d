import { describe, expect, it } from 'vitest'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Annotation, Store } from '../../../src/index.js'
import { orderKey } from '../../../src/store/store.js'
import { DEFAULT_BYTE_BUDGET } from '../../../src/views/page.js'
import { memoryStore } from '../../helpers/store.js'
import { connect, errorOf, structured } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'

const closers = useCleanups()

type Item = Record<string, unknown> & { id: string }
type Page = { annotations: Item[]; count: number; total: number; nextCursor?: string; truncated?: string }

async function mcpFor(store: Store, options: { byteBudget?: number } = {}) {
  const mcp = await connect(store, options)
  closers.push(() => mcp.close())
  return mcp
}

const wireBytes = (r: CallToolResult) => Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: r }))

async function realistic(store: Store, sessionId: string, i: number): Promise<Annotation> {
  return store.addAnnotation({
    sessionId,
    comment: `The submit button overlaps the footer on narrow screens (${i})`,
    url: 'http://localhost:5173/checkout',
    element: { selector: `main > form > div:nth-child(${i % 7}) > button.primary`, path: 'html > body > main > form > div > button', tag: 'button', text: 'Submit order', html: '<button class="primary" type="submit">Submit order</button>', rect: { x: 10, y: 20, width: 120, height: 32 } },
    viewport: { width: 390, height: 844 },
    intent: 'fix',
    severity: 'important',
  })
}

describe('summaries and detail', () => {
  it('list tools return summaries by default and full records on request; get_annotation gives everything', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await realistic(store, s.id, 1)
    await store.reply(a.id, { author: 'human', message: 'Only on iPhone' })
    const mcp = await mcpFor(store)

    const summary = structured<Page>(await mcp.call('get_all_pending')).annotations[0]!
    expect(Object.keys(summary).sort()).toEqual(['comment', 'createdAt', 'id', 'intent', 'lastReply', 'replyCount', 'rev', 'selector', 'sessionId', 'severity', 'status', 'text', 'url'])
    expect(summary).toMatchObject({ selector: 'main > form > div:nth-child(1) > button.primary', text: 'Submit order', replyCount: 1, lastReply: { author: 'human', message: 'Only on iPhone' } })

    const full = structured<Page>(await mcp.call('get_all_pending', { detail: 'full' })).annotations[0]!
    expect(full).toMatchObject({ element: { html: '<button class="primary" type="submit">Submit order</button>', rect: { width: 120 } }, viewport: { width: 390 }, replies: [{ message: 'Only on iPhone' }] })

    const one = structured<{ annotation: Annotation }>(await mcp.call('get_annotation', { id: a.id }))
    expect(one.annotation).toEqual(store.getAnnotation(a.id))
    expect(errorOf(await mcp.call('get_annotation', { id: 'ann_missing' })).code).toBe('NOT_FOUND')
  })

  it('the text part is one line per annotation, under a header, and smaller than the JSON', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    for (let i = 0; i < 20; i++) await realistic(store, s.id, i)
    const mcp = await mcpFor(store)
    const r = await mcp.call('get_all_pending')
    const text = (r.content as { text: string }[])[0]!.text
    const lines = text.split('\n')
    expect(lines[0]).toBe(`Pending annotations: 20 of 20, oldest first (rev ${store.rev}).`)
    expect(lines[1]).toBe(`session ${s.id} at http://localhost:5173/checkout`)
    expect(lines.filter((l) => l.startsWith('- ann_'))).toHaveLength(20)
    expect(lines[2]).toContain('[pending fix/important]')
    expect(lines[2]).toContain('The submit button overlaps the footer')
    expect(Buffer.byteLength(text)).toBeLessThan(Buffer.byteLength(JSON.stringify(r.structuredContent)) * 0.7)
  })

  it('fewer pending than a page: everything, no cursor, an honest total', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://x/' })
    for (let i = 0; i < 7; i++) await realistic(store, s.id, i)
    const mcp = await mcpFor(store)
    const r = structured<Page>(await mcp.call('get_pending', { sessionId: s.id }))
    expect(r).toMatchObject({ count: 7, total: 7 })
    expect(r.nextCursor).toBeUndefined()
  })

  it('watch_annotations returns a page of summaries', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://x/' })
    for (let i = 0; i < 5; i++) await realistic(store, s.id, i)
    const mcp = await mcpFor(store)
    const r = structured<Page & { status: string }>(await mcp.call('watch_annotations', { limit: 2 }))
    expect(r).toMatchObject({ status: 'annotations', count: 2, total: 5 })
    expect(r.annotations[0]).toHaveProperty('replyCount')
    const rest = structured<Page>(await mcp.call('get_all_pending', { cursor: r.nextCursor }))
    expect(rest.count).toBe(3)
  })
})

describe('pages with cursors', () => {
  it('paging through 1 234 pending yields each exactly once, in order, while others are added and acknowledged', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://localhost:5173/' })
    const initial: Annotation[] = []
    for (let i = 0; i < 1_234; i++) initial.push(await realistic(store, s.id, i))
    const mcp = await mcpFor(store)

    const seen: Item[] = []
    const acknowledgedAhead = new Set<string>()
    const acknowledgedBehind = new Set<string>()
    const added: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = structured<Page>(await mcp.call('get_all_pending', { limit: 100, ...(cursor ? { cursor } : {}) }))
      seen.push(...page.annotations)
      cursor = page.nextCursor
      pages++
      // Mid-way changes: a new annotation, one acknowledged ahead of the cursor and one behind it.
      added.push((await realistic(store, s.id, 10_000 + pages)).id)
      const ahead = initial[Math.min(initial.length - 1, seen.length + 50)]!
      if (store.getAnnotation(ahead.id).status === 'pending') {
        await store.acknowledge(ahead.id)
        acknowledgedAhead.add(ahead.id)
      }
      const behind = seen[Math.floor(seen.length / 2)]!
      if (store.getAnnotation(behind.id).status === 'pending') {
        await store.acknowledge(behind.id)
        acknowledgedBehind.add(behind.id)
      }
    } while (cursor && pages < 100)

    const ids = seen.map((a) => a.id)
    expect(new Set(ids).size).toBe(ids.length) // each exactly once
    const keys = seen.map((a) => orderKey(a as unknown as Annotation))
    expect([...keys].sort()).toEqual(keys) // in order
    for (const a of initial) {
      if (acknowledgedAhead.has(a.id)) expect(ids).not.toContain(a.id)
      else expect(ids).toContain(a.id)
    }
    // annotations added during the walk come after the cursor, so the walk reaches them (all but the last page's)
    for (const id of added.slice(0, -1)) expect(ids).toContain(id)
    expect(acknowledgedAhead.size).toBeGreaterThan(5)
    expect(acknowledgedBehind.size).toBeGreaterThan(5)
  }, 60_000)

  it('a malformed cursor is INVALID_PARAMS naming the cursor', async () => {
    const store = memoryStore()
    const mcp = await mcpFor(store)
    for (const cursor of ['nope', 'c1.!!!', 'c1.' + Buffer.from('not a key').toString('base64url')]) {
      const err = errorOf(await mcp.call('get_all_pending', { cursor }))
      expect(err.code).toBe('INVALID_PARAMS')
      expect(err.message).toContain('cursor')
    }
    expect(errorOf(await mcp.call('get_all_pending', { limit: 501 })).message).toContain('limit')
  })
})

describe('the byte budget', () => {
  async function huge(store: Store, sessionId: string, replies = 1) {
    const a = await store.addAnnotation({
      sessionId,
      comment: 'c'.repeat(10_000),
      url: 'http://localhost:5173/' + 'u'.repeat(4_000),
      element: { selector: 's'.repeat(2_000), path: 'p'.repeat(4_000), text: 't'.repeat(2_000), html: 'h'.repeat(5_000) },
      selectedText: 'x'.repeat(5_000),
    })
    for (let i = 0; i < replies; i++) await store.reply(a.id, { author: 'agent', message: 'r'.repeat(10_000) })
    return a
  }

  it('no list result exceeds the budget, even with maximum-size fields; it returns a page and says so', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://x/' })
    for (let i = 0; i < 60; i++) await huge(store, s.id, 2)
    for (const byteBudget of [100 * 1024, DEFAULT_BYTE_BUDGET]) {
      const mcp = await mcpFor(store, { byteBudget })
      for (const detail of ['summary', 'full']) {
        let cursor: string | undefined
        let total = 0
        do {
          const r = await mcp.call('get_all_pending', { limit: 500, detail, ...(cursor ? { cursor } : {}) })
          expect(wireBytes(r)).toBeLessThanOrEqual(byteBudget)
          const page = structured<Page>(r)
          if (page.nextCursor) expect(page.truncated).toBe('byte_budget')
          if (detail === 'summary') {
            expect(page.annotations[0]).toMatchObject({ clipped: true })
            expect((page.annotations[0]!.comment as string).length).toBeLessThanOrEqual(1_000)
          }
          total += page.count
          cursor = page.nextCursor
        } while (cursor)
        expect(total).toBe(60)
      }
      const watched = await mcp.call('watch_annotations', { limit: 500 })
      expect(wireBytes(watched)).toBeLessThanOrEqual(byteBudget)
    }
  })

  it('a record with a very long thread keeps its newest replies and says how many it left out', async () => {
    const store = memoryStore()
    const s = await store.createSession({ url: 'http://x/' })
    const a = await huge(store, s.id, 60) // ~650 KB of replies
    const mcp = await mcpFor(store, { byteBudget: 256 * 1024 }) // a maximal record alone is ~40 % of the 80 KiB default
    for (const [tool, args] of [
      ['get_annotation', { id: a.id }],
      ['reply', { id: a.id, message: 'one more' }],
    ] as const) {
      const r = await mcp.call(tool, args)
      expect(wireBytes(r)).toBeLessThanOrEqual(256 * 1024)
      const out = structured<{ annotation: Annotation; omittedReplies: number }>(r)
      expect(out.omittedReplies).toBeGreaterThan(0)
      expect(out.annotation.replies.at(-1)!.id).toBe(store.getAnnotation(a.id).replies.at(-1)!.id)
      expect(out.annotation.replies.length + out.omittedReplies).toBe(store.getAnnotation(a.id).replies.length)
    }
  })
})
