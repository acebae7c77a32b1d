/**
 * The tool policy binds an agent at every door: under `--profile read-only --deny get_changes` an
 * agent's token may read over REST but not reply, acknowledge, resolve, dismiss or upload (403
 * naming the policy), and may not open the change streams (`/api/events`, `/events`, a session's
 * events). People are not agents: the overlay's and the inbox's calls still work for a signed-in
 * person. The agent-only routes are bound for the operator's token too (no person calls them).
 */
import { describe, expect, it } from 'vitest'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore, type Store } from '../../../src/index.js'
import type { ToolPolicy } from '../../../src/tools/policy.js'
import { request, serve, SseClient, bearer, codeOf } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex')

async function team(tools: ToolPolicy = { profile: 'read-only', deny: ['get_changes'] }, token?: string) {
  const store: Store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { tools, ...(token ? { token } : {}) })
  const alice = await addPerson(store, 'Alice', { publicUrl: http.url })
  const person = (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })).json.token as string
  const agent = (await addAgent(store, 'ci-agent')).token
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const annotation = await store.addAnnotation({ sessionId: session.id, comment: 'Bigger title' })
  return { url: http.url, store, person, agent, session, annotation }
}

describe('the tool policy binds an agent on REST and the event streams', () => {
  it('a read-only agent reads over REST; every write is 403 naming the policy; a person still writes', async () => {
    const { url, agent, person, session, annotation } = await team()
    const as = bearer(agent)
    expect((await request(`${url}/api/sessions`, { headers: as })).status).toBe(200)
    expect((await request(`${url}/api/sessions/${session.id}`, { headers: as })).status).toBe(200)
    expect((await request(`${url}/api/annotations`, { headers: as })).status).toBe(200)
    expect((await request(`${url}/api/annotations/${annotation.id}`, { headers: as })).status).toBe(200)
    expect((await request(`${url}/api/questions`, { headers: as })).status).toBe(200)

    const writes: [string, unknown][] = [
      [`/api/annotations/${annotation.id}/replies`, { message: 'On it' }],
      [`/api/annotations/${annotation.id}/acknowledge`, {}],
      [`/api/annotations/${annotation.id}/resolve`, { summary: 'Done' }],
      [`/api/annotations/${annotation.id}/dismiss`, { reason: 'No' }],
    ]
    for (const [path, body] of writes) {
      const res = await request(`${url}${path}`, { method: 'POST', headers: as, body })
      expect(res.status, path).toBe(403)
      expect(res.json.error.code).toBe('POLICY_FORBIDDEN')
      expect(res.json.error.message).toContain('--profile read-only --deny get_changes')
    }
    const upload = await request(`${url}/api/attachments`, { method: 'POST', headers: { ...as, 'Content-Type': 'image/png' }, body: PNG })
    expect(upload.status).toBe(403)
    expect(upload.json.error.details).toMatchObject({ tool: 'reply' })

    // Nothing changed; the person (the overlay, the inbox) is not an agent and still replies.
    const reply = await request(`${url}/api/annotations/${annotation.id}/replies`, { method: 'POST', headers: bearer(person), body: { message: 'Any news?' } })
    expect(reply.status).toBe(201)
    const after = await request(`${url}/api/annotations/${annotation.id}`, { headers: as })
    expect(after.json.status).toBe('pending')
    expect(after.json.replies.map((r: { message: string }) => r.message)).toEqual(['Any news?'])
  })

  it('a denied get_changes denies the change streams to the agent, not to a person', async () => {
    const { url, agent, person, session } = await team()
    for (const path of ['/api/events', '/events', `/api/sessions/${session.id}/events`, `/sessions/${session.id}/events`]) {
      const res = await request(`${url}${path}?lastEventId=0`, { headers: { ...bearer(agent), Accept: 'text/event-stream' } })
      expect(res.status, path).toBe(403)
      expect(res.json.error.details).toMatchObject({ tool: 'get_changes' })
    }
    const stream = await SseClient.open(`${url}/api/events?lastEventId=0`, bearer(person))
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
  })

  it('the agent-only routes are bound for the operator token too; the default policy lets an agent write', async () => {
    const bound = await team({ profile: 'read-only', deny: ['get_changes'] }, 'operator-secret-1234567890')
    const refused = await request(`${bound.url}/api/annotations/${bound.annotation.id}/acknowledge`, { method: 'POST', headers: bearer('operator-secret-1234567890'), body: {} })
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe('POLICY_FORBIDDEN')

    const open = await team({ profile: 'default', deny: [] })
    const ack = await request(`${open.url}/api/annotations/${open.annotation.id}/acknowledge`, { method: 'POST', headers: bearer(open.agent), body: {} })
    expect(ack.status).toBe(200)
    const stream = await SseClient.open(`${open.url}/api/events?lastEventId=0`, bearer(open.agent))
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
  })
})
