/**
 * The stdio server writes each message with `toJson` instead of `JSON.stringify`: the text must
 * be the same, byte for byte, for any message — with or without summaries' kept JSON and pages'
 * remembered text inside it.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/index.js'
import { createToolRegistry } from '../../../src/tools/registry.js'
import { joinLines, jsonBody, keptJson, toJson } from '../../../src/views/json.js'

describe('toJson', () => {
  it('is JSON.stringify for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(toJson(value)).toBe(JSON.stringify(value))
      }),
      { numRuns: 300 },
    )
  })

  it('is JSON.stringify for values JSON drops or converts (undefined, functions, toJSON, class instances, boxed primitives, holes)', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    // eslint-disable-next-line no-sparse-arrays
    const holes = [1, , 3]
    const values: unknown[] = [
      undefined,
      () => 1,
      { a: undefined, b: () => 1, c: Symbol('s'), d: 1 },
      [undefined, () => 1, Symbol('s'), NaN, Infinity, -0],
      holes,
      { when: new Date(0), nested: { toJSON: () => ({ replaced: true }) } },
      new Point(1, 2),
      { point: new Point(3, 4) },
      [new String('boxed'), new Number(2), new Boolean(false)],
      Object.assign(Object.create(null) as object, { bare: 'object' }),
      { [Symbol('hidden')]: 1, shown: 2 },
      new Map([[1, 2]]),
      { '\u2028': 'line separator', 'quote"key': '\ud800 lone surrogate' },
    ]
    for (const value of values) expect(toJson(value)).toBe(JSON.stringify(value))
  })

  it('uses the JSON kept for an immutable object, wherever it sits', () => {
    const summary = Object.freeze({ id: 'ann_1', comment: 'say "hi"\n', rev: 3 })
    expect(keptJson(summary)).toBe(JSON.stringify(summary))
    const message = { jsonrpc: '2.0', id: 1, result: { structuredContent: { annotations: [summary, summary], count: 2 } } }
    expect(toJson(message)).toBe(JSON.stringify(message))
  })

  it("gives a joined text the JSON made from its pieces' bodies, which is JSON.stringify's", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 120 }), { minLength: 1, maxLength: 30 }), (pieces) => {
        const text = joinLines(pieces, pieces.map(jsonBody))
        expect(text).toBe(pieces.join('\n'))
        expect(toJson(text)).toBe(JSON.stringify(text))
        expect(toJson({ content: [{ type: 'text', text }] })).toBe(JSON.stringify({ content: [{ type: 'text', text }] }))
      }),
      { numRuns: 40 },
    )
  })

  it('writes a page of get_all_pending as JSON.stringify does (quotes, newlines, backslashes, non-Latin-1, long fields)', async () => {
    const store = createMemoryStore()
    try {
      const session = await store.createSession({ url: 'http://localhost:5173/ünïcode?q="x"' })
      const comments = ['plain', 'say "hi"\nand\tgo', 'back\\slash', 'emoji 🎉 and ⏎', 'x'.repeat(1_500), 'control \u0001 char']
      for (let i = 0; i < 120; i++) {
        await store.addAnnotation({ sessionId: session.id, comment: `${comments[i % comments.length]} #${i}`, element: { selector: `div:nth-child(${i}) > "odd"`, tag: 'div', text: `text ${i}\n  spaced` } })
      }
      const registry = createToolRegistry(store)
      let cursor: string | undefined
      let pages = 0
      do {
        const outcome = await registry.call('get_all_pending', cursor ? { cursor, limit: 50 } : { limit: 50 })
        if (!outcome.ok) throw new Error(outcome.error.message)
        const message = { result: { content: [{ type: 'text', text: outcome.text }], structuredContent: outcome.result }, jsonrpc: '2.0', id: pages }
        expect(toJson(message)).toBe(JSON.stringify(message))
        cursor = (outcome.result as { nextCursor?: string }).nextCursor
        pages++
      } while (cursor)
      expect(pages).toBe(3)
    } finally {
      await store.close()
    }
  })
})
