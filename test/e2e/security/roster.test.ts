/** The roster (who is on the team, their credentials and sign-in times) reaches admins only, on every stream. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, signedIn, SseClient, type SseEvent, bearer } from '../../helpers/http.js'

const ROSTER = /^(identity|credential)\./

const cleanups = useCleanups()

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  return { store, http, admin: await signedIn(store, http.url, 'Ada', 'admin'), person: await signedIn(store, http.url, 'Alice'), agent: (await addAgent(store, 'ci-agent')).token }
}

async function open(url: string, token: string): Promise<SseClient> {
  const sse = await SseClient.open(url, bearer(token))
  cleanups.push(() => sse.close())
  expect(sse.status).toBe(200)
  return sse
}

const types = (events: SseEvent[]) => events.map((e) => e.event)

describe('the roster over the event streams', () => {
  it('a person catching up from rev 0 and following live sees no identity or credential event; an admin sees them', async () => {
    const { store, http, admin, person } = await team()
    const session = await request(`${http.url}/api/sessions`, { method: 'POST', headers: bearer(person), body: { url: 'http://app.test/' } })
    expect(session.status).toBe(201)
    const asPerson = await open(`${http.url}/api/events?lastEventId=0`, person)
    const asPersonAlias = await open(`${http.url}/events`, person)
    const asPersonHeader = await SseClient.open(`${http.url}/api/events`, { ...bearer(person), 'Last-Event-ID': '0' })
    cleanups.push(() => asPersonHeader.close())
    const asAdmin = await open(`${http.url}/api/events?lastEventId=0`, admin)
    // Live: someone new joins, then an annotation: the marker every stream waits for.
    await addPerson(store, 'Mallory-Watched', { publicUrl: http.url })
    const a = await request(`${http.url}/api/sessions/${session.json.id}/annotations`, { method: 'POST', headers: bearer(person), body: { comment: 'marker' } })
    expect(a.status).toBe(201)
    const created = (events: SseEvent[]) => events.some((e) => e.event === 'annotation.created')
    for (const sse of [asPerson, asPersonAlias, asPersonHeader]) {
      const events = await sse.until(created)
      expect(types(events).filter((t) => ROSTER.test(t))).toEqual([])
      expect(events.map((e) => e.data).join('\n')).not.toMatch(/Ada|Mallory-Watched|signedInAt|credential/)
    }
    expect(types(await asPerson.until(created))).toContain('session.created')
    const adminEvents = await asAdmin.until(created)
    expect(types(adminEvents)).toEqual(expect.arrayContaining(['identity.added', 'credential.issued', 'credential.ended']))
    expect(adminEvents.map((e) => e.data).join('\n')).toContain('Mallory-Watched')
  })

  it('an agent asking get_changes from rev 0 over MCP gets no identity or credential event', async () => {
    const { http, agent } = await team()
    const client = new Client({ name: 'ci', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl), { requestInit: { headers: bearer(agent) } }))
    cleanups.push(() => client.close())
    const r = await client.callTool({ name: 'get_changes', arguments: { sinceRev: 0 } })
    expect(r.isError).toBeFalsy()
    const events = (r.structuredContent as { events: { type: string }[] }).events
    expect(events.filter((e) => ROSTER.test(e.type))).toEqual([])
    expect(JSON.stringify(r.content)).not.toMatch(/Ada|Alice/)
  })
})
