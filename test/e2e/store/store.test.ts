import { describe, expect, it } from 'vitest'
import { firstValueFrom, take, toArray } from 'rxjs'
import {
  ConflictError,
  CursorExpiredError,
  NotFoundError,
  ValidationError,
  createMemoryStore,
  type StoreEvent,
} from '../../../src/index.js'
import { contractStore, describeContract } from '../../helpers/contract.js'

async function seeded() {
  const store = await contractStore()
  const s1 = await store.createSession({ url: 'http://localhost:5173/', name: 'checkout' })
  const s2 = await store.createSession({ url: 'http://localhost:5173/cart' })
  const a1 = await store.addAnnotation({ sessionId: s1.id, comment: 'Button overlaps the footer', intent: 'fix', severity: 'blocking', element: { selector: '#pay' } })
  const a2 = await store.addAnnotation({ sessionId: s2.id, comment: 'Typo in heading' })
  const a3 = await store.addAnnotation({ sessionId: s1.id, comment: 'Make the total bold', intent: 'change' })
  return { store, s1, s2, a1, a2, a3 }
}

await describeContract(() => {
  describe('commands', () => {
    it('creates sessions and annotations with ids, timestamps and rev', async () => {
      const { store, s1, a1 } = await seeded()
      expect(s1).toMatchObject({ id: 'ses_0001', url: 'http://localhost:5173/', name: 'checkout', createdAt: '2026-01-01T12:00:01.000Z', rev: 1 })
      expect(a1).toMatchObject({ id: 'ann_0003', sessionId: s1.id, status: 'pending', comment: 'Button overlaps the footer', intent: 'fix', severity: 'blocking', replies: [], rev: 3 })
      expect(a1.element).toEqual({ selector: '#pay' })
      expect(store.rev).toBe(5)
    })

    it('records returned by the store are frozen', async () => {
      const { a1 } = await seeded()
      expect(Object.isFrozen(a1)).toBe(true)
      expect(() => {
        ;(a1 as { comment: string }).comment = 'changed'
      }).toThrow()
    })

    it('acknowledge, resolve and dismiss turn their message into an agent reply in the same mutation', async () => {
      const { store, a1, a2, a3 } = await seeded()
      const events: StoreEvent[] = []
      store.changes$.subscribe((e) => events.push(e))
      const acked = await store.acknowledge(a1.id, { message: 'On it' })
      const resolved = await store.resolve(a1.id, { summary: 'Moved the footer below the fold' })
      const dismissed = await store.dismiss(a2.id, { reason: 'The spelling is intended' })
      const plain = await store.resolve(a3.id)
      expect(acked.replies).toMatchObject([{ author: 'agent', message: 'On it' }])
      expect(resolved.replies.map((r) => r.message)).toEqual(['On it', 'Moved the footer below the fold'])
      expect(resolved.resolvedAt).toBe(resolved.updatedAt)
      expect(dismissed.replies).toMatchObject([{ author: 'agent', message: 'The spelling is intended' }])
      expect(plain.replies).toEqual([])
      expect(events.map((e) => [e.type, e.rev])).toEqual([
        ['annotation.status_changed', 6],
        ['annotation.status_changed', 7],
        ['annotation.status_changed', 8],
        ['annotation.status_changed', 9],
      ])
      expect(events[0]).toMatchObject({ from: 'pending', to: 'acknowledged', reply: { author: 'agent', message: 'On it' } })
    })

    it('reopen is the person’s: its message becomes a human reply and resolvedAt is cleared', async () => {
      const { store, a1 } = await seeded()
      await store.resolve(a1.id, { summary: 'done' })
      const reopened = await store.reopen(a1.id, { message: 'Still overlapping on mobile' })
      expect(reopened.status).toBe('pending')
      expect(reopened.resolvedAt).toBeUndefined()
      expect(reopened.replies.at(-1)).toMatchObject({ author: 'human', message: 'Still overlapping on mobile' })
    })

    it('reply appends without changing the status', async () => {
      const { store, a1 } = await seeded()
      const updated = await store.reply(a1.id, { author: 'human', message: 'Any news?' })
      expect(updated.status).toBe('pending')
      expect(updated.replies).toMatchObject([{ id: 'rep_0006', author: 'human', message: 'Any news?' }])
    })

    it('deleteAnnotation removes it from every query and emits annotation.deleted', async () => {
      const { store, s1, a1 } = await seeded()
      const events: StoreEvent[] = []
      store.changes$.subscribe((e) => events.push(e))
      await store.deleteAnnotation(a1.id)
      expect(() => store.getAnnotation(a1.id)).toThrow(NotFoundError)
      expect(store.getPending(s1.id).map((a) => a.id)).toEqual(['ann_0005'])
      expect(store.getSession(s1.id).annotations.map((a) => a.id)).toEqual(['ann_0005'])
      expect(events).toMatchObject([{ type: 'annotation.deleted', annotationId: a1.id, from: 'pending' }])
    })

    it('unknown ids raise NotFoundError and change nothing', async () => {
      const { store } = await seeded()
      const before = store.getState()
      await expect(store.acknowledge('ann_nope')).rejects.toBeInstanceOf(NotFoundError)
      await expect(store.reply('ann_nope', { author: 'agent', message: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND', kind: 'annotation' })
      await expect(store.addAnnotation({ sessionId: 'ses_nope', comment: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND', kind: 'session' })
      expect(() => store.getSession('ses_nope')).toThrow(NotFoundError)
      expect(() => store.getPending('ses_nope')).toThrow(NotFoundError)
      expect(store.getState()).toBe(before)
    })

    it('bad input is a ValidationError naming the field, and changes nothing', async () => {
      const { store, s1, a1 } = await seeded()
      const before = store.getState()
      const cases: [Promise<unknown>, string][] = [
        [store.addAnnotation({ sessionId: s1.id, comment: '' }), 'comment'],
        [store.addAnnotation({ sessionId: s1.id, comment: 'x'.repeat(10_001) }), 'comment'],
        [store.addAnnotation({ sessionId: s1.id, comment: 'ok', intent: 'panic' as never }), 'intent'],
        [store.addAnnotation({ sessionId: s1.id, comment: 'ok', element: { selector: '' } }), 'element.selector'],
        [store.createSession({ url: '' }), 'url'],
        [store.dismiss(a1.id, { reason: '   ' }), 'reason'],
        [store.dismiss(a1.id, {} as never), 'reason'],
        [store.reply(a1.id, { author: 'robot' as never, message: 'hi' }), 'author'],
        [store.acknowledge(a1.id, { extra: 1 } as never), 'extra'],
      ]
      for (const [promise, field] of cases) {
        const error = await promise.then(() => null, (e: unknown) => e)
        expect(error).toBeInstanceOf(ValidationError)
        expect((error as ValidationError).code).toBe('INVALID_PARAMS')
        expect((error as ValidationError).message).toContain(field)
      }
      expect(store.getState()).toBe(before)
    })

    it('a 10 000-character comment is accepted', async () => {
      const { store, s1 } = await seeded()
      const a = await store.addAnnotation({ sessionId: s1.id, comment: 'x'.repeat(10_000) })
      expect(a.comment).toHaveLength(10_000)
    })

    it('expectedRev guards against acting on a stale read (CONFLICT), and passes when current', async () => {
      const { store, a1 } = await seeded()
      const stale = a1.rev
      await store.reply(a1.id, { author: 'human', message: 'more detail' })
      const error = await store.acknowledge(a1.id, { expectedRev: stale }).then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(ConflictError)
      expect(error).toMatchObject({ code: 'CONFLICT', currentRev: 6, currentStatus: 'pending' })
      const fresh = store.getAnnotation(a1.id)
      await expect(store.acknowledge(a1.id, { expectedRev: fresh.rev })).resolves.toMatchObject({ status: 'acknowledged' })
    })

    it('refused commands in a burst do not disturb the others', async () => {
      const { store, a1, a2 } = await seeded()
      const results = await Promise.allSettled([store.acknowledge(a1.id), store.acknowledge(a1.id), store.acknowledge(a2.id)])
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      expect(store.rev).toBe(7)
    })
  })

  describe('queries', () => {
    it('lists sessions oldest first and a session with its annotations oldest first', async () => {
      const { store, s1, s2, a1, a3 } = await seeded()
      expect(store.listSessions().map((s) => s.id)).toEqual([s1.id, s2.id])
      expect(store.getSession(s1.id)).toMatchObject({ id: s1.id, annotations: [{ id: a1.id }, { id: a3.id }] })
    })

    it('pending queries follow status changes and stay oldest first', async () => {
      const { store, s1, a1, a2, a3 } = await seeded()
      expect(store.getAllPending().map((a) => a.id)).toEqual([a1.id, a2.id, a3.id])
      await store.acknowledge(a1.id)
      expect(store.getPending(s1.id).map((a) => a.id)).toEqual([a3.id])
      expect(store.getAllPending().map((a) => a.id)).toEqual([a2.id, a3.id])
      await store.reopen(a1.id)
      expect(store.getAllPending().map((a) => a.id)).toEqual([a1.id, a2.id, a3.id])
      expect(store.countPending()).toBe(3)
      expect(store.countPending(s1.id)).toBe(2)
    })

    it('ties on createdAt are broken by id', async () => {
      const same = new Date('2026-03-01T00:00:00.000Z')
      const ids = ['ses_a', 'ann_c', 'ann_a', 'ann_b']
      const store = createMemoryStore({ clock: () => same, ids: () => ids.shift()! })
      const s = await store.createSession({ url: 'http://x/' })
      await store.addAnnotation({ sessionId: s.id, comment: '1' })
      await store.addAnnotation({ sessionId: s.id, comment: '2' })
      await store.addAnnotation({ sessionId: s.id, comment: '3' })
      expect(store.getAllPending().map((a) => a.id)).toEqual(['ann_a', 'ann_b', 'ann_c'])
      expect(store.getSession('ses_a').annotations.map((a) => a.id)).toEqual(['ann_a', 'ann_b', 'ann_c'])
    })

    it('listAnnotations filters by status and session', async () => {
      const { store, s1, a1, a2, a3 } = await seeded()
      await store.resolve(a3.id)
      expect(store.listAnnotations().map((a) => a.id)).toEqual([a1.id, a2.id, a3.id])
      expect(store.listAnnotations({ status: 'resolved' }).map((a) => a.id)).toEqual([a3.id])
      expect(store.listAnnotations({ sessionId: s1.id, status: 'pending' }).map((a) => a.id)).toEqual([a1.id])
    })
  })

  describe('events and changesSince', () => {
    it('every mutation bumps rev by one and emits exactly one event; state$ follows', async () => {
      const store = await contractStore()
      const revs: number[] = []
      store.changes$.subscribe((e) => revs.push(e.rev))
      const states = firstValueFrom(store.state$.pipe(take(3), toArray()))
      const s = await store.createSession({ url: 'http://x/' })
      await store.addAnnotation({ sessionId: s.id, comment: 'c' })
      expect(revs).toEqual([1, 2])
      expect((await states).map((st) => st.rev)).toEqual([0, 1, 2])
    })

    it('changesSince returns the events after a rev, optionally per session and limited', async () => {
      const { store, s2 } = await seeded()
      expect(store.changesSince(0).map((e) => e.rev)).toEqual([1, 2, 3, 4, 5])
      expect(store.changesSince(3).map((e) => e.type)).toEqual(['annotation.created', 'annotation.created'])
      expect(store.changesSince(0, { sessionId: s2.id }).map((e) => e.rev)).toEqual([2, 4])
      expect(store.changesSince(0, { limit: 2 }).map((e) => e.rev)).toEqual([1, 2])
      expect(store.changesSince(5)).toEqual([])
      expect(() => store.changesSince(6)).toThrow(ValidationError)
    })

    it('a rev older than the window is CursorExpiredError naming the oldest rev kept', async () => {
      const store = await contractStore({ eventWindow: 1000 })
      const s = await store.createSession({ url: 'http://x/' })
      const a = await store.addAnnotation({ sessionId: s.id, comment: 'c' })
      // Concurrent, so the file and PostgreSQL adapters group-commit them (the contract suite runs on all three).
      await Promise.all(Array.from({ length: 2100 }, (_, i) => store.reply(a.id, { author: 'agent', message: `m${i}` })))
      expect(store.rev).toBe(2102)
      const oldest = store.oldestAvailableRev
      expect(store.rev - oldest).toBeGreaterThanOrEqual(1000)
      expect(store.changesSince(oldest)).toHaveLength(store.rev - oldest)
      const error = (() => {
        try {
          store.changesSince(oldest - 1)
        } catch (e) {
          return e
        }
      })()
      expect(error).toBeInstanceOf(CursorExpiredError)
      expect(error).toMatchObject({ code: 'CURSOR_EXPIRED', oldestRev: oldest + 1 })
      expect((error as Error).message).toContain(`rev ${oldest + 1}`)
    })

    it('a closed store refuses commands', async () => {
      const store = await contractStore()
      await store.close()
      await expect(store.createSession({ url: 'http://x/' })).rejects.toMatchObject({ code: 'STORE_CLOSED' })
    })
  })
})
