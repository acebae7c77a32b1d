/**
 * The pending index the list tools page through (oldest first, ties by id) stays equal to a plain
 * filter-and-sort of the records across any mix of create, acknowledge, resolve, dismiss, reopen
 * and delete, with pages read between the changes; and paging it (or every annotation) by cursor
 * gives every one once, in that order.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/index.js'
import type { Annotation } from '../../../src/store/model.js'

type Op = { kind: 'create' } | { kind: 'ack' | 'resolve' | 'dismiss' | 'reopen' | 'delete'; pick: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'create' as const }) },
  fc.record({ kind: fc.constantFrom('ack' as const, 'resolve' as const, 'dismiss' as const, 'reopen' as const, 'delete' as const), pick: fc.nat() }),
)

const byOrder = (a: Annotation, b: Annotation) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

describe('the pending index', () => {
  it('pages exactly the pending annotations, oldest first (ties by id), after any sequence of changes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), async (ops, limit) => {
        // Few distinct timestamps, so ties by id are exercised.
        let tick = 0
        const store = createMemoryStore({ clock: () => new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(tick++ / 3))) })
        try {
          const sessions = [await store.createSession({ url: 'http://localhost:5173/a' }), await store.createSession({ url: 'http://localhost:5173/b' })]
          let n = 0
          for (const o of ops) {
            const all = store.listAnnotations({})
            const target = o.kind === 'create' ? undefined : all[o.pick % Math.max(1, all.length)]
            try {
              if (o.kind === 'create') await store.addAnnotation({ sessionId: sessions[n++ % 2]!.id, comment: `c${n}` })
              else if (!target) continue
              else if (o.kind === 'ack') await store.acknowledge(target.id, {})
              else if (o.kind === 'resolve') await store.resolve(target.id, { summary: 'done' })
              else if (o.kind === 'dismiss') await store.dismiss(target.id, { reason: 'no' })
              else if (o.kind === 'reopen') await store.reopen(target.id, {})
              else await store.deleteAnnotation(target.id, {})
            } catch (e) {
              // A move the status machine refuses (resolving a pending one …) changes nothing.
              if ((e as { code?: string }).code !== 'CONFLICT' && (e as { code?: string }).code !== 'INVALID_TRANSITION') throw e
            }
            // Reads between the changes: the indexes keep each key's id once a page has read it,
            // and the changes after must keep those in step with the keys.
            const some = store.pageAnnotations({ status: 'pending' }, { limit: 1 + (n % 4) })
            if (some.items.length > 0) store.pageAnnotations({ status: 'pending' }, { after: some.lastKey!, limit })
            store.pageAnnotations({}, { limit })
            store.pageAnnotations({ status: 'pending', sessionId: sessions[n % 2]!.id }, {})
          }
          const expected = store.listAnnotations({}).filter((a) => a.status === 'pending').sort(byOrder).map((a) => a.id)
          const seen: string[] = []
          let after: string | undefined
          for (;;) {
            const page = store.pageAnnotations({ status: 'pending' }, { limit, ...(after ? { after } : {}) })
            expect(page.total).toBe(expected.length)
            seen.push(...page.items.map((a) => a.id))
            if (!page.hasMore) break
            after = page.lastKey
          }
          expect(seen).toEqual(expected)
          const everything: string[] = []
          after = undefined
          for (;;) {
            const page = store.pageAnnotations({}, { limit, ...(after ? { after } : {}) })
            everything.push(...page.items.map((a) => a.id))
            if (!page.hasMore) break
            after = page.lastKey
          }
          expect(everything).toEqual(store.listAnnotations({}).sort(byOrder).map((a) => a.id))
          for (const s of sessions) {
            const mine = store.pageAnnotations({ status: 'pending', sessionId: s.id }, {}).items.map((a) => a.id)
            expect(mine).toEqual(store.listAnnotations({}).filter((a) => a.status === 'pending' && a.sessionId === s.id).sort(byOrder).map((a) => a.id))
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: 60 },
    )
  })
})
