/** The person's side of the permission relay over REST: who may answer, once, before it expires; the live stream of requests. */
import { describe, expect, it } from 'vitest'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { request, serve, bearer, codeOf, SseClient } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const alice = await addPerson(store, 'Alice', { publicUrl: http.url })
  const person = (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })).json.token as string
  const agent = (await addAgent(store, 'ci-agent')).token
  return { store, url: http.url, person, agent }
}

describe('permission requests over REST', () => {
  it("an agent's token may neither list nor answer; a person answers once; the answer names who gave it", async () => {
    const { store, url, person, agent } = await team()
    await store.requestPermission({ requestId: 'tbxkq', toolName: 'Bash', description: 'Run the tests', inputPreview: '{"command":"npm test"}', agent: 'claude-code' })

    expect((await request(`${url}/api/permissions`)).status).toBe(401)
    const agentList = await request(`${url}/api/permissions`, { headers: bearer(agent) })
    expect(agentList.status).toBe(403)
    const agentAnswer = await request(`${url}/api/permissions/tbxkq`, { method: 'POST', headers: bearer(agent), body: { behavior: 'allow' } })
    expect(agentAnswer.status).toBe(403)
    expect(agentAnswer.json.error.message).toContain("answer an agent's permission requests")
    expect(store.listPermissions()[0]!.answer).toBeUndefined()

    const listed = await request(`${url}/api/permissions`, { headers: bearer(person) })
    expect(listed.status).toBe(200)
    expect(listed.json.permissions).toMatchObject([{ requestId: 'tbxkq', toolName: 'Bash', state: 'open', agent: 'claude-code' }])

    const bad = await request(`${url}/api/permissions/tbxkq`, { method: 'POST', headers: bearer(person), body: { behavior: 'maybe' } })
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toContain('behavior')

    const answered = await request(`${url}/api/permissions/tbxkq`, { method: 'POST', headers: bearer(person), body: { behavior: 'deny' } })
    expect(answered.status).toBe(200)
    expect(answered.json).toMatchObject({ requestId: 'tbxkq', state: 'answered', answer: { behavior: 'deny', by: { name: 'Alice' } } })

    const twice = await request(`${url}/api/permissions/tbxkq`, { method: 'POST', headers: bearer(person), body: { behavior: 'allow' } })
    expect(twice.status).toBe(409)
    expect(twice.json.error.message).toContain('already answered (deny)')
    expect((await request(`${url}/api/permissions/nope`, { method: 'POST', headers: bearer(person), body: { behavior: 'allow' } })).status).toBe(404)
  })

  it('an expired request is listed as expired and refuses an answer, pointing at the terminal', async () => {
    let now = Date.parse('2026-11-29T10:00:00.000Z')
    const store = createMemoryStore({ clock: () => new Date(now) })
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    await store.requestPermission({ requestId: 'abcde', toolName: 'Write', description: 'Write src/a.ts', inputPreview: 'src/a.ts', timeoutMs: 60_000 })
    now += 61_000
    const late = await request(`${http.url}/api/permissions/abcde`, { method: 'POST', body: { behavior: 'allow' } })
    expect(late.status).toBe(409)
    expect(late.json.error.message).toContain("answer it in the agent's terminal")
  })

  it('the permission stream carries only permission events, live and replayed', async () => {
    const { store, url, person } = await team()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    await store.requestPermission({ requestId: 'first', toolName: 'Bash', description: '', inputPreview: 'ls' })
    const since = store.rev - 1
    const stream = await SseClient.open(`${url}/api/permissions/events?lastEventId=${since}`, bearer(person))
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
    await store.addAnnotation({ sessionId: session.id, comment: 'not for this stream' })
    await store.answerPermission('first', { behavior: 'allow' })
    const events = await stream.until((e) => e.some((x) => x.event === 'permission.answered'))
    expect(events.map((e) => e.event)).toEqual(['permission.requested', 'permission.answered'])
  })

  it('with ?open=1 the stream says first how many requests wait now (no replay), then goes on live; a bad value is refused', async () => {
    const { store, url, person } = await team()
    await store.requestPermission({ requestId: 'old01', toolName: 'Bash', description: '', inputPreview: 'ls' })
    await store.answerPermission('old01', { behavior: 'deny' })
    await store.requestPermission({ requestId: 'wait1', toolName: 'Bash', description: '', inputPreview: 'npm test' })
    await store.requestPermission({ requestId: 'wait2', toolName: 'Write', description: '', inputPreview: 'src/a.ts' })

    const stream = await SseClient.open(`${url}/api/permissions/events?lastEventId=0&open=1`, bearer(person))
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
    await store.requestPermission({ requestId: 'live1', toolName: 'Bash', description: '', inputPreview: 'ls -la' })
    const events = await stream.until((e) => e.some((x) => x.event === 'permission.requested'))
    // What waits now (old01 was answered), then only what happened since: lastEventId=0 replays nothing.
    expect(events.map((e) => e.event)).toEqual(['permission.open', 'permission.requested'])
    expect(JSON.parse(events[0]!.data)).toEqual({ open: 2 })
    expect(JSON.parse(events[1]!.data)).toMatchObject({ requestId: 'live1' })

    // Nothing waiting: no permission.open frame at all.
    await store.answerPermission('wait1', { behavior: 'allow' })
    await store.answerPermission('wait2', { behavior: 'allow' })
    await store.answerPermission('live1', { behavior: 'allow' })
    const quiet = await SseClient.open(`${url}/api/permissions/events?open=1`, bearer(person))
    cleanups.push(() => quiet.close())
    await store.requestPermission({ requestId: 'live2', toolName: 'Bash', description: '', inputPreview: 'pwd' })
    expect((await quiet.until((e) => e.length > 0)).map((e) => e.event)).toEqual(['permission.requested'])

    const bad = await request(`${url}/api/permissions/events?open=yes`, { headers: bearer(person) })
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toContain('open')
    expect((await request(`${url}/api/permissions/events?open=1`)).status).toBe(401)
  })

  it("with ?permissions=1 a person's page stream says first how many requests wait, then carries them on a session's stream, replayed and live; an agent is refused; a bad value names the field", async () => {
    const { store, url, person, agent } = await team()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const beforeWait = store.rev
    await store.requestPermission({ requestId: 'wait1', toolName: 'Bash', description: '', inputPreview: 'npm test' })
    // Resumed from before it: replayed with the session's own events (a page that reconnects misses none).
    const resumed = await SseClient.open(`${url}/api/sessions/${session.id}/events?permissions=1&lastEventId=${beforeWait}`, bearer(person))
    cleanups.push(() => resumed.close())
    const replayed = (await resumed.until((e) => e.some((x) => x.event === 'permission.requested'))).filter((e) => e.event !== 'presence')
    expect(replayed.map((e) => e.event)).toEqual(['permission.open', 'permission.requested'])
    expect(JSON.parse(replayed[1]!.data)).toMatchObject({ requestId: 'wait1' })

    const page = await SseClient.open(`${url}/api/sessions/${session.id}/events?permissions=1&lastEventId=${store.rev}`, bearer(person))
    cleanups.push(() => page.close())
    expect(page.status).toBe(200)
    const plain = await SseClient.open(`${url}/api/sessions/${session.id}/events?lastEventId=${store.rev}`, bearer(person))
    cleanups.push(() => plain.close())
    await store.requestPermission({ requestId: 'live1', toolName: 'Write', description: '', inputPreview: 'src/a.ts' })
    await store.addAnnotation({ sessionId: session.id, comment: 'the session goes on' })
    const seen = (await page.until((e) => e.some((x) => x.event === 'annotation.created'))).filter((e) => e.event !== 'presence')
    expect(seen.map((e) => e.event)).toEqual(['permission.open', 'permission.requested', 'annotation.created'])
    expect(JSON.parse(seen[0]!.data)).toEqual({ open: 1 })
    expect(JSON.parse(seen[1]!.data)).toMatchObject({ requestId: 'live1' })
    // Without the parameter, a session's stream stays the session's.
    expect((await plain.until((e) => e.some((x) => x.event === 'annotation.created'))).map((e) => e.event).filter((t) => t !== 'presence')).toEqual(['annotation.created'])

    // The stream of every session carries the permission events anyway: the parameter adds what waits at connect.
    const all = await SseClient.open(`${url}/api/events?permissions=1`, bearer(person))
    cleanups.push(() => all.close())
    expect((await all.until((e) => e.some((x) => x.event !== 'presence'))).map((e) => e.event).filter((t) => t !== 'presence')).toEqual(['permission.open'])

    const refused = await request(`${url}/api/sessions/${session.id}/events?permissions=1`, { headers: bearer(agent) })
    expect(refused.status).toBe(403)
    expect(refused.json.error.message).toContain('leave out ?permissions=1')
    const bad = await request(`${url}/api/events?permissions=yes`, { headers: bearer(person) })
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toContain('permissions')
  })

  it("/health says how many requests wait to those who may answer them, and nothing of them to an agent or to nobody", async () => {
    const { store, url, person, agent } = await team()
    await store.requestPermission({ requestId: 'wait1', toolName: 'Bash', description: '', inputPreview: 'npm test' })
    await store.requestPermission({ requestId: 'wait2', toolName: 'Bash', description: '', inputPreview: 'ls' })
    await store.answerPermission('wait2', { behavior: 'allow' })
    expect((await request(`${url}/health`, { headers: bearer(person) })).json.permissions).toEqual({ open: 1 })
    expect((await request(`${url}/health`, { headers: bearer(agent) })).json.permissions).toBeUndefined()
    expect((await request(`${url}/health`)).json.permissions).toBeUndefined()
    expect((await request(`${url}/health`, { headers: bearer('not-a-token') })).json).toMatchObject({ status: 'ok' })

    // Local use (no team inbox): whoever uses the page is the person.
    const local = createMemoryStore()
    cleanups.push(() => local.close())
    const http = await serve(local, cleanups)
    expect((await request(`${http.url}/health`)).json.permissions).toEqual({ open: 0 })
  })
})
