import { describe, expect, it } from 'vitest'
import type { Annotation } from '../../../src/index.js'
import { createMemoryStore } from '../../../src/index.js'
import { deterministic, tempDir } from '../../helpers/store.js'
import { request, serve } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

/** Two pages of the app, 12 annotations with a spread of statuses, intents, severities and replies. */
async function seeded() {
  const archive = tempDir()
  cleanups.push(archive.cleanup)
  const store = createMemoryStore({ ...deterministic(), archiveDirectory: archive.dir })
  cleanups.push(() => store.close())
  const server = await serve(store, cleanups)
  const api = (path: string) => `${server.url}${path}`
  const home = await store.createSession({ url: 'http://localhost:5173/' })
  const cart = await store.createSession({ url: 'http://localhost:5173/cart' })
  const made: Annotation[] = []
  for (let i = 0; i < 12; i++) {
    const a = await store.addAnnotation({
      sessionId: i % 3 === 0 ? cart.id : home.id,
      comment: i === 5 ? 'The Checkout button is hidden' : `Item ${i}`,
      ...(i % 2 === 0 ? { intent: 'fix' as const } : {}),
      ...(i % 4 === 0 ? { severity: 'blocking' as const } : {}),
    })
    made.push(a)
  }
  await store.resolve(made[1]!.id)
  await store.dismiss(made[2]!.id, { reason: 'duplicate' })
  await store.acknowledge(made[3]!.id)
  await store.reply(made[4]!.id, { author: 'agent', message: 'Which PAYMENT form do you mean?' })
  await store.reply(made[6]!.id, { author: 'human', message: 'still broken' })
  return { store, api, home, cart, made }
}

const ids = (r: { json: { annotations: Annotation[] } }) => r.json.annotations.map((a) => a.id)

describe('REST: searching the annotations (inbox)', () => {
  it('sorts newest first with a cursor that continues in that order, and counts totals per session and status', async () => {
    const { api, made, home, cart } = await seeded()
    const first = await request(api('/api/annotations?sort=newest&limit=5'))
    expect(first.status).toBe(200)
    expect(ids(first)).toEqual(made.slice(7).reverse().map((a) => a.id))
    expect(first.json.total).toBe(12)
    expect(first.json.totals).toEqual({ sessions: { [home.id]: 8, [cart.id]: 4 }, statuses: { pending: 9, acknowledged: 1, resolved: 1, dismissed: 1 } })
    const second = await request(api(`/api/annotations?sort=newest&limit=5&cursor=${first.json.nextCursor}`))
    expect(ids(second)).toEqual(made.slice(2, 7).reverse().map((a) => a.id))
    const oldest = await request(api('/api/annotations?sort=oldest&limit=2'))
    expect(ids(oldest)).toEqual([made[0]!.id, made[1]!.id])
  })

  it('filters by several statuses, sessions, intent, severity and reply author; status totals ignore the status filter', async () => {
    const { api, made, cart } = await seeded()
    const open = await request(api('/api/annotations?status=pending,acknowledged&sort=newest&limit=100'))
    expect(open.json.total).toBe(10)
    expect(open.json.totals.statuses).toEqual({ pending: 9, acknowledged: 1, resolved: 1, dismissed: 1 })
    const cartFixes = await request(api(`/api/annotations?sessionId=${cart.id}&intent=fix`))
    expect(ids(cartFixes)).toEqual([made[0]!.id, made[6]!.id])
    const blocking = await request(api('/api/annotations?severity=blocking'))
    expect(ids(blocking)).toEqual([made[0]!.id, made[4]!.id, made[8]!.id])
    const noIntent = await request(api('/api/annotations?intent=none&severity=none'))
    expect(ids(noIntent)).toEqual([1, 3, 5, 7, 9, 11].map((i) => made[i]!.id))
    // The dismiss reason is an agent reply here (the agent dismissed it), so "agent" finds 2 and 4.
    const agent = await request(api('/api/annotations?author=agent'))
    expect(ids(agent)).toEqual([made[2]!.id, made[4]!.id])
    const human = await request(api('/api/annotations?author=human'))
    expect(ids(human)).toEqual([made[6]!.id])
  })

  it('searches comments and replies, every word, ignoring case', async () => {
    const { api, made } = await seeded()
    expect(ids(await request(api('/api/annotations?q=checkout%20HIDDEN')))).toEqual([made[5]!.id])
    expect(ids(await request(api('/api/annotations?q=payment')))).toEqual([made[4]!.id])
    expect(ids(await request(api('/api/annotations?q=checkout%20payment')))).toEqual([])
  })

  it('refuses bad parameters with 400 naming the field and the fix', async () => {
    const { api } = await seeded()
    const bad = async (path: string, mentions: string[]) => {
      const r = await request(api(path))
      expect(r.status).toBe(400)
      const message = (r.json as { error: { message: string } }).error.message
      for (const m of mentions) expect(message).toContain(m)
    }
    await bad('/api/annotations?sort=sideways', ['sort', 'oldest, newest'])
    await bad('/api/annotations?status=pending,done', ['status', '"done"', 'pending, acknowledged, resolved, dismissed'])
    await bad('/api/annotations?intent=bug', ['intent', '"bug"', 'fix'])
    await bad('/api/annotations?author=bob', ['author', 'agent or human'])
    await bad(`/api/annotations?q=${'x'.repeat(201)}`, ['q', 'at most 200'])
    await bad('/api/annotations?colour=red', ['colour'])
  })
})

describe('REST: bulk actions', () => {
  it('resolves, dismisses, reopens and deletes a selection, one event per annotation, and names what failed', async () => {
    const { api, store, made } = await seeded()
    const before = store.rev
    const seen: string[] = []
    const sub = store.changes$.subscribe((e) => seen.push(e.type))
    cleanups.push(() => sub.unsubscribe())
    const resolve = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'resolve', ids: [made[0]!.id, made[7]!.id, 'ann_missing'] } })
    expect(resolve.status).toBe(200)
    expect(resolve.json.done).toEqual([made[0]!.id, made[7]!.id])
    expect(resolve.json.failed).toEqual([expect.objectContaining({ id: 'ann_missing', code: 'NOT_FOUND' })])
    expect(store.getAnnotation(made[0]!.id).status).toBe('resolved')
    expect(store.rev).toBe(before + 2)

    const dismiss = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'dismiss', ids: [made[8]!.id], message: 'Not a bug' } })
    expect(dismiss.json.done).toEqual([made[8]!.id])
    const dismissed = store.getAnnotation(made[8]!.id)
    expect(dismissed.status).toBe('dismissed')
    expect(dismissed.replies.at(-1)).toMatchObject({ author: 'human', message: 'Not a bug' })

    const reopen = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'reopen', ids: [made[8]!.id] } })
    expect(reopen.json.done).toEqual([made[8]!.id])
    const del = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'delete', ids: [made[9]!.id, made[10]!.id] } })
    expect(del.json.done).toEqual([made[9]!.id, made[10]!.id])
    expect(store.listAnnotations()).toHaveLength(10)
    expect(seen.filter((s) => s.startsWith('annotation.')).length).toBe(2 + 1 + 1 + 2)
  })

  it('archives only finished annotations of a selection and says why the others stay', async () => {
    const { api, store, made } = await seeded()
    const r = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'archive', ids: [made[1]!.id, made[2]!.id, made[5]!.id] } })
    expect(r.status).toBe(200)
    expect(r.json.done).toEqual([made[1]!.id, made[2]!.id])
    expect(r.json.failed).toEqual([expect.objectContaining({ id: made[5]!.id, code: 'INVALID_TRANSITION', message: expect.stringContaining('Resolve or dismiss it first') })])
    expect(store.listAnnotations().map((a) => a.id)).not.toContain(made[1]!.id)
    // Other finished annotations are not archived by a selection.
    await store.resolve(made[11]!.id)
    expect(store.getAnnotation(made[11]!.id).status).toBe('resolved')
  })

  it('refuses a bad body with 400 naming the field', async () => {
    const { api } = await seeded()
    const r = await request(api('/api/annotations/bulk'), { method: 'POST', body: { action: 'explode', ids: [] } })
    expect(r.status).toBe(400)
    const message = (r.json as { error: { message: string } }).error.message
    expect(message).toContain('action')
    expect(message).toContain('resolve, dismiss, reopen, delete, archive')
    expect(message).toContain('at least one')
  })
})
