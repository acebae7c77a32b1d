import { describe, expect, it } from 'vitest'
import type { Annotation, Session } from '../../../src/index.js'
import { memoryStore } from '../../helpers/store.js'
import { request, serve } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function setup() {
  const store = memoryStore()
  cleanups.push(() => store.close())
  const server = await serve(store, cleanups)
  const api = (path: string) => `${server.url}${path}`
  return { store, server, api }
}

async function withSession() {
  const s = await setup()
  const created = await request(s.api('/api/sessions'), { method: 'POST', body: { url: 'http://localhost:5173/', name: 'Home' } })
  const session = created.json as Session
  return { ...s, session }
}

async function withAnnotation() {
  const s = await withSession()
  const created = await request(s.api(`/api/sessions/${s.session.id}/annotations`), {
    method: 'POST',
    body: { comment: 'The button overlaps the footer', element: { selector: 'footer button' }, intent: 'fix', severity: 'important' },
  })
  return { ...s, annotation: created.json as Annotation }
}

function expectError(reply: { status: number; json: unknown }, status: number, code: string, mentions?: string) {
  expect(reply.status).toBe(status)
  const error = (reply.json as { error: { code: string; message: string } }).error
  expect(error.code).toBe(code)
  if (mentions !== undefined) expect(error.message).toContain(mentions)
  return error
}

describe('REST: sessions', () => {
  it('POST /api/sessions creates a session (201) and GET lists it with the store rev', async () => {
    const { api, store } = await setup()
    const created = await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://localhost:5173/', name: 'Home' } })
    expect(created.status).toBe(201)
    expect(created.headers['content-type']).toMatch(/^application\/json/)
    expect(created.json).toMatchObject({ id: 'ses_0001', url: 'http://localhost:5173/', name: 'Home', rev: 1 })
    await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://localhost:3000/about' } })

    const list = await request(api('/api/sessions'))
    expect(list.status).toBe(200)
    expect(list.json.sessions.map((s: Session) => s.url)).toEqual(['http://localhost:5173/', 'http://localhost:3000/about'])
    expect(list.json.count).toBe(2)
    expect(list.json.rev).toBe(2)
    expect(store.listSessions()).toHaveLength(2)
  })

  it('POST /api/sessions refuses invalid bodies with 400 naming the field, and nothing reaches the store', async () => {
    const { api, store } = await setup()
    const missing = await request(api('/api/sessions'), { method: 'POST', body: { name: 'no url' } })
    const e1 = expectError(missing, 400, 'INVALID_PARAMS', 'url')
    expect(e1).toMatchObject({ details: { issues: [{ path: 'url' }] } })
    expectError(await request(api('/api/sessions'), { method: 'POST', body: { url: '   ' } }), 400, 'INVALID_PARAMS', 'url')
    expectError(await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://x/', name: 42 } }), 400, 'INVALID_PARAMS', 'name')
    expectError(await request(api('/api/sessions'), { method: 'POST', body: { url: 'http://x/', colour: 'red' } }), 400, 'INVALID_PARAMS', 'colour')
    expectError(await request(api('/api/sessions'), { method: 'POST', body: [1, 2] }), 400, 'INVALID_PARAMS')
    expect(store.rev).toBe(0)
  })

  it('malformed JSON is 400; a body without Content-Type: application/json is 415', async () => {
    const { api, store } = await setup()
    expectError(await request(api('/api/sessions'), { method: 'POST', body: '{"url": ', headers: { 'Content-Type': 'application/json' } }), 400, 'INVALID_PARAMS', 'not valid JSON')
    expectError(await request(api('/api/sessions'), { method: 'POST', body: '{"url":"http://x/"}', headers: { 'Content-Type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'application/json')
    expectError(await request(api('/api/sessions'), { method: 'POST', body: 'url=http://x/', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    expectError(await request(api('/api/sessions'), { method: 'POST' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    // A charset parameter is fine.
    const ok = await request(api('/api/sessions'), { method: 'POST', body: '{"url":"http://x/"}', headers: { 'Content-Type': 'application/json; charset=utf-8' } })
    expect(ok.status).toBe(201)
    expect(store.rev).toBe(1)
  })

  it('GET /api/sessions/:id returns the session with its annotations, oldest first; unknown id is 404', async () => {
    const { api, session, store } = await withSession()
    await store.addAnnotation({ sessionId: session.id, comment: 'first' })
    await store.addAnnotation({ sessionId: session.id, comment: 'second' })
    const got = await request(api(`/api/sessions/${session.id}`))
    expect(got.status).toBe(200)
    expect(got.json).toMatchObject({ id: session.id, url: 'http://localhost:5173/' })
    expect(got.json.annotations.map((a: Annotation) => a.comment)).toEqual(['first', 'second'])
    expectError(await request(api('/api/sessions/ses_nope')), 404, 'NOT_FOUND', 'ses_nope')
    expectError(await request(api('/api/sessions/%E0%A4%A')), 400, 'INVALID_PARAMS', 'id')
  })
})

describe('REST: annotations', () => {
  it('POST /api/sessions/:id/annotations creates a pending annotation (201)', async () => {
    const { api, session, store, annotation } = await withAnnotation()
    expect(annotation).toMatchObject({ sessionId: session.id, status: 'pending', comment: 'The button overlaps the footer', element: { selector: 'footer button' }, intent: 'fix' })
    expect(store.getAllPending().map((a) => a.id)).toEqual([annotation.id])
    const again = await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: 'Second' } })
    expect(again.status).toBe(201)
  })

  it('POST annotations: 400 naming the field, 404 for an unknown session; the store is untouched', async () => {
    const { api, session, store } = await withSession()
    const rev = store.rev
    expectError(await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: '' } }), 400, 'INVALID_PARAMS', 'comment')
    expectError(await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: 'x', severity: 'urgent' } }), 400, 'INVALID_PARAMS', 'severity')
    expectError(await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: 'x', element: { tag: 'div' } } }), 400, 'INVALID_PARAMS', 'element.selector')
    // sessionId comes from the path, never from the body.
    expectError(await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: 'x', sessionId: 'other' } }), 400, 'INVALID_PARAMS', 'sessionId')
    expectError(await request(api('/api/sessions/ses_nope/annotations'), { method: 'POST', body: { comment: 'x' } }), 404, 'NOT_FOUND', 'ses_nope')
    expect(store.rev).toBe(rev)
  })

  it('GET /api/annotations filters by status and sessionId, oldest first', async () => {
    const { api, store, session, annotation } = await withAnnotation()
    const other = await store.createSession({ url: 'http://localhost:5173/other' })
    const b = await store.addAnnotation({ sessionId: other.id, comment: 'elsewhere' })
    const c = await store.addAnnotation({ sessionId: session.id, comment: 'third' })
    await store.acknowledge(c.id)

    const all = await request(api('/api/annotations'))
    expect(all.status).toBe(200)
    expect(all.json.annotations.map((a: Annotation) => a.id)).toEqual([annotation.id, b.id, c.id])
    expect(all.json.rev).toBe(store.rev)
    const pending = await request(api('/api/annotations?status=pending'))
    expect(pending.json.annotations.map((a: Annotation) => a.id)).toEqual([annotation.id, b.id])
    const inSession = await request(api(`/api/annotations?sessionId=${session.id}`))
    expect(inSession.json.annotations.map((a: Annotation) => a.id)).toEqual([annotation.id, c.id])
    const acked = await request(api(`/api/annotations?sessionId=${session.id}&status=acknowledged`))
    expect(acked.json.annotations.map((a: Annotation) => a.id)).toEqual([c.id])

    expectError(await request(api('/api/annotations?status=done')), 400, 'INVALID_PARAMS', 'status')
    expectError(await request(api('/api/annotations?sessionId=ses_nope')), 404, 'NOT_FOUND', 'ses_nope')
  })

  it('GET /api/annotations/:id returns one annotation; unknown is 404', async () => {
    const { api, annotation } = await withAnnotation()
    const got = await request(api(`/api/annotations/${annotation.id}`))
    expect(got.status).toBe(200)
    expect(got.json).toEqual(annotation)
    expectError(await request(api('/api/annotations/ann_nope')), 404, 'NOT_FOUND', 'ann_nope')
  })

  it('POST /api/annotations/:id/replies adds a human reply (201); stale expectedRev is 409 CONFLICT', async () => {
    const { api, annotation, store } = await withAnnotation()
    const replied = await request(api(`/api/annotations/${annotation.id}/replies`), { method: 'POST', body: { message: 'Only on mobile', expectedRev: annotation.rev } })
    expect(replied.status).toBe(201)
    expect(replied.json.status).toBe('pending')
    expect(replied.json.replies).toMatchObject([{ author: 'human', message: 'Only on mobile' }])

    const rev = store.rev
    const stale = await request(api(`/api/annotations/${annotation.id}/replies`), { method: 'POST', body: { message: 'again', expectedRev: annotation.rev } })
    expectError(stale, 409, 'CONFLICT')
    expectError(await request(api(`/api/annotations/${annotation.id}/replies`), { method: 'POST', body: {} }), 400, 'INVALID_PARAMS', 'message')
    // The author is always human over REST: the field is not accepted.
    expectError(await request(api(`/api/annotations/${annotation.id}/replies`), { method: 'POST', body: { message: 'hi', author: 'agent' } }), 400, 'INVALID_PARAMS', 'author')
    expectError(await request(api('/api/annotations/ann_nope/replies'), { method: 'POST', body: { message: 'hi' } }), 404, 'NOT_FOUND')
    expect(store.rev).toBe(rev)
  })

  it('POST /api/annotations/:id/reopen: 409 INVALID_TRANSITION from pending; 200 after the agent resolved it; stale rev 409 CONFLICT', async () => {
    const { api, annotation, store } = await withAnnotation()
    const illegal = expectError(await request(api(`/api/annotations/${annotation.id}/reopen`), { method: 'POST', body: {} }), 409, 'INVALID_TRANSITION', 'pending')
    expect(illegal).toMatchObject({ details: { currentStatus: 'pending' } })

    const resolved = await store.resolve(annotation.id, { summary: 'Raised the z-index' })
    expectError(await request(api(`/api/annotations/${annotation.id}/reopen`), { method: 'POST', body: { expectedRev: annotation.rev } }), 409, 'CONFLICT')
    const reopened = await request(api(`/api/annotations/${annotation.id}/reopen`), { method: 'POST', body: { message: 'Still overlapping on Safari', expectedRev: resolved.rev } })
    expect(reopened.status).toBe(200)
    expect(reopened.json.status).toBe('pending')
    expect(reopened.json.replies.map((r: { author: string; message: string }) => [r.author, r.message])).toEqual([
      ['agent', 'Raised the z-index'],
      ['human', 'Still overlapping on Safari'],
    ])
    expectError(await request(api(`/api/annotations/${annotation.id}/reopen`), { method: 'POST', body: { message: '' } }), 400, 'INVALID_PARAMS', 'message')
    expectError(await request(api('/api/annotations/ann_nope/reopen'), { method: 'POST', body: {} }), 404, 'NOT_FOUND')
  })

  it('DELETE /api/annotations/:id removes it (200, the annotation as it was); then 404; stale expectedRev is 409', async () => {
    const { api, annotation, store, session } = await withAnnotation()
    const other = await store.addAnnotation({ sessionId: session.id, comment: 'keep me' })
    expectError(await request(api(`/api/annotations/${other.id}?expectedRev=0`), { method: 'DELETE' }), 409, 'CONFLICT')
    expectError(await request(api(`/api/annotations/${other.id}`), { method: 'DELETE', body: { expectedRev: 0 } }), 409, 'CONFLICT')
    expectError(await request(api(`/api/annotations/${other.id}?expectedRev=abc`), { method: 'DELETE' }), 400, 'INVALID_PARAMS', 'expectedRev')

    const deleted = await request(api(`/api/annotations/${annotation.id}`), { method: 'DELETE' })
    expect(deleted.status).toBe(200)
    expect(deleted.json).toMatchObject({ id: annotation.id, comment: 'The button overlaps the footer' })
    expectError(await request(api(`/api/annotations/${annotation.id}`)), 404, 'NOT_FOUND')
    expectError(await request(api(`/api/annotations/${annotation.id}`), { method: 'DELETE' }), 404, 'NOT_FOUND')
    const byRev = await request(api(`/api/annotations/${other.id}?expectedRev=${other.rev}`), { method: 'DELETE' })
    expect(byRev.status).toBe(200)
    expect(store.listAnnotations()).toEqual([])
    expect(store.changesSince(0).map((e) => e.type).slice(-2)).toEqual(['annotation.deleted', 'annotation.deleted'])
  })
})

describe('REST: methods, unknown routes, health', () => {
  it('405 with Allow for a known path and a wrong method; 404 for unknown routes', async () => {
    const { api, session } = await withSession()
    const put = await request(api('/api/sessions'), { method: 'PUT', body: {} })
    expectError(put, 405, 'METHOD_NOT_ALLOWED')
    expect(put.headers.allow).toBe('GET, POST')
    const del = await request(api(`/api/sessions/${session.id}`), { method: 'DELETE' })
    expectError(del, 405, 'METHOD_NOT_ALLOWED')
    expect(del.headers.allow).toBe('GET')
    expectError(await request(api('/api/annotations/x/replies')), 405, 'METHOD_NOT_ALLOWED')
    expectError(await request(api('/health'), { method: 'POST', body: {} }), 405, 'METHOD_NOT_ALLOWED')
    expectError(await request(api('/api/nothing-here')), 404, 'NOT_FOUND')
    expectError(await request(api('/api/sessions/a/b/c')), 404, 'NOT_FOUND')
    expectError(await request(api('/nothing-here')), 404, 'NOT_FOUND')
  })

  it('GET /health reports status, version, rev, pending and agent presence', async () => {
    const { api, store, session } = await withSession()
    await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    const health = await request(api('/health'))
    expect(health.status).toBe(200)
    expect(health.json).toMatchObject({ status: 'ok', name: 'marginalia', rev: 2, pending: 1, agent: { connected: false, sessions: 0, watching: 0 } })
    expect(health.json.version).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('GET /api lists the routes; GET / without built assets is a small HTML page', async () => {
    const { api } = await setup()
    const index = await request(api('/api'))
    expect(index.json.routes).toContain('GET /api/events')
    const home = await request(api('/'))
    expect(home.status).toBe(200)
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(home.text).toContain('Marginalia is running')
    expect(home.text).toContain('href="/health"')
    expect(home.text).toContain('claude mcp add --transport http marginalia')
  })

  it('a store error without an HTTP meaning is a 500 without internals', async () => {
    const { api, store } = await setup()
    const original = store.pageSessions.bind(store)
    store.pageSessions = () => {
      throw new Error('secret internal detail at /home/user/file.ts:12')
    }
    const failed = await request(api('/api/sessions'))
    store.pageSessions = original
    expectError(failed, 500, 'INTERNAL_ERROR')
    expect(failed.text).not.toContain('secret')
    expect(failed.text).not.toContain('file.ts')
  })
})

describe('REST: paging and questions', () => {
  it('list endpoints page with limit and cursor: each record once, in order, with total and nextCursor', async () => {
    const { api, session } = await withSession()
    for (let i = 0; i < 25; i++) await request(api(`/api/sessions/${session.id}/annotations`), { method: 'POST', body: { comment: `note ${i}` } })
    for (const base of ['/api/annotations?', `/api/sessions/${session.id}?`, `/api/annotations?sessionId=${session.id}&status=pending&`]) {
      const seen: string[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const r = await request(api(`${base}limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`))
        expect(r.status).toBe(200)
        expect(r.json.total).toBe(25)
        expect(r.json.count).toBe(r.json.annotations.length)
        seen.push(...r.json.annotations.map((a: Annotation) => a.comment))
        cursor = r.json.nextCursor
        pages++
      } while (cursor)
      expect(pages).toBe(3)
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `note ${i}`))
    }
    const sessions = await request(api('/api/sessions?limit=1'))
    expect(sessions.json).toMatchObject({ count: 1, total: 1 })
    expect(sessions.json.nextCursor).toBeUndefined()
  })

  it('GET /api/sessions?url= lists only that page\'s sessions, oldest first, a page at a time', async () => {
    const { api, store, session } = await withSession()
    const other = await store.createSession({ url: 'http://localhost:5173/cart' })
    const again = await store.createSession({ url: 'http://localhost:5173/' })
    const home = await request(api(`/api/sessions?url=${encodeURIComponent('http://localhost:5173/')}`))
    expect(home.status).toBe(200)
    expect(home.json.sessions.map((s: Session) => s.id)).toEqual([session.id, again.id])
    expect(home.json).toMatchObject({ count: 2, total: 2 })
    const first = await request(api(`/api/sessions?limit=1&url=${encodeURIComponent('http://localhost:5173/')}`))
    expect(first.json.sessions.map((s: Session) => s.id)).toEqual([session.id])
    const next = await request(api(`/api/sessions?limit=1&url=${encodeURIComponent('http://localhost:5173/')}&cursor=${encodeURIComponent(first.json.nextCursor)}`))
    expect(next.json.sessions.map((s: Session) => s.id)).toEqual([again.id])
    expect(next.json.nextCursor).toBeUndefined()
    expect((await request(api(`/api/sessions?url=${encodeURIComponent('http://localhost:5173/cart')}`))).json.sessions.map((s: Session) => s.id)).toEqual([other.id])
    expect((await request(api(`/api/sessions?url=${encodeURIComponent('http://localhost:5173/nowhere')}`))).json).toMatchObject({ sessions: [], count: 0, total: 0 })
    expectError(await request(api(`/api/sessions?url=${'x'.repeat(5000)}`)), 400, 'INVALID_PARAMS', 'url')
  })

  it('bad paging parameters are 400 naming them', async () => {
    const { api } = await withSession()
    expectError(await request(api('/api/annotations?limit=0')), 400, 'INVALID_PARAMS', 'limit')
    expectError(await request(api('/api/annotations?limit=501')), 400, 'INVALID_PARAMS', 'limit')
    expectError(await request(api('/api/annotations?limit=ten')), 400, 'INVALID_PARAMS', 'limit')
    expectError(await request(api('/api/annotations?cursor=nope')), 400, 'INVALID_PARAMS', 'cursor')
    expectError(await request(api('/api/sessions?bogus=1')), 400, 'INVALID_PARAMS', 'bogus')
  })

  it('GET /api/questions lists the agent’s unanswered questions until the person replies', async () => {
    const { api, store, annotation } = await withAnnotation()
    expect((await request(api('/api/questions'))).json).toMatchObject({ questions: [], count: 0 })
    await store.reply(annotation.id, { author: 'agent', message: 'Which footer?', kind: 'question' })
    const open = await request(api('/api/questions'))
    expect(open.json.count).toBe(1)
    expect(open.json.questions[0]).toMatchObject({ annotation: { id: annotation.id }, question: { author: 'agent', kind: 'question', message: 'Which footer?' } })
    expect((await request(api('/questions'))).json).toEqual(open.json) // the short name, same route
    await request(api(`/api/annotations/${annotation.id}/replies`), { method: 'POST', body: { message: 'The page footer' } })
    expect((await request(api('/api/questions'))).json.count).toBe(0)
  })
})
