/**
 * The agents' permission prompts (what a tool would run) and the answers reach only those who may
 * answer them: a person or an admin (the MCP tools are an agent's or an admin's), never an agent's token — not on the event streams, not in the
 * changes tools, replayed or live.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import { addAgent } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { serve, signedIn, SseClient, type SseEvent, bearer } from '../../helpers/http.js'

const cleanups = useCleanups()
const SECRET_PREVIEW = '{"command":"deploy --password hunter2"}'

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const person = await signedIn(store, http.url, 'Alice')
  const admin = await signedIn(store, http.url, 'Ada', 'admin')
  const session = await store.createSession({ url: 'http://app.test/' })
  // Before anyone connects: what a replay from rev 0 would carry.
  await store.requestPermission({ requestId: 'early', toolName: 'Bash', description: 'Deploy', inputPreview: SECRET_PREVIEW, agent: 'claude-code' })
  await store.answerPermission('early', { behavior: 'deny' })
  return { store, http, session, person, admin, agent: (await addAgent(store, 'ci-agent')).token }
}

async function open(url: string, token: string): Promise<SseClient> {
  const sse = await SseClient.open(url, bearer(token))
  cleanups.push(() => sse.close())
  expect(sse.status).toBe(200)
  return sse
}

const created = (events: SseEvent[]) => events.some((e) => e.event === 'annotation.created')
const permissionTypes = (events: { event?: string; type?: string }[]) => events.map((e) => e.event ?? e.type).filter((t) => t?.startsWith('permission.'))

async function mcpAs(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'ci', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer(token) } }))
  cleanups.push(() => client.close())
  return client
}

describe("the agents' permission prompts", () => {
  it("an agent's event stream, replayed from rev 0 and live, carries none of them; a person's carries both", async () => {
    const { store, http, session, person, agent } = await team()
    const asAgent = await open(`${http.url}/api/events?lastEventId=0`, agent)
    const asAgentSession = await open(`${http.url}/api/sessions/${session.id}/events?lastEventId=0`, agent)
    const asPerson = await open(`${http.url}/api/events?lastEventId=0`, person)
    await store.requestPermission({ requestId: 'live1', toolName: 'Bash', description: 'Deploy again', inputPreview: SECRET_PREVIEW })
    await store.addAnnotation({ sessionId: session.id, comment: 'marker' })

    for (const sse of [asAgent, asAgentSession]) {
      const events = await sse.until(created)
      expect(permissionTypes(events)).toEqual([])
      expect(events.map((e) => e.data).join('\n')).not.toContain('hunter2')
    }
    const seen = await asPerson.until(created)
    expect(permissionTypes(seen)).toEqual(['permission.requested', 'permission.answered', 'permission.requested'])
  })

  it("an agent's get_changes and watch_changes leave them out; an admin's get_changes has them", async () => {
    const { store, http, session, admin, agent } = await team()
    const client = await mcpAs(http.mcpUrl, agent)
    const r = await client.callTool({ name: 'get_changes', arguments: { sinceRev: 0 } })
    expect(r.isError).toBeFalsy()
    const events = (r.structuredContent as { events: { type: string }[]; toRev: number }).events
    expect(events.map((e) => e.type)).toContain('session.created')
    expect(permissionTypes(events)).toEqual([])
    expect(JSON.stringify(r.content)).not.toContain('hunter2')

    // A watch from now: a permission request alone does not wake it; the annotation after it does, alone.
    const from = store.rev
    const watching = client.callTool({ name: 'watch_changes', arguments: { sinceRev: from, timeoutMs: 10_000 } })
    await store.requestPermission({ requestId: 'live2', toolName: 'Bash', description: '', inputPreview: SECRET_PREVIEW })
    await store.addAnnotation({ sessionId: session.id, comment: 'marker' })
    const woke = await watching
    expect((woke.structuredContent as { status: string }).status).toBe('changes')
    expect((woke.structuredContent as { events: { type: string }[] }).events.map((e) => e.type)).toEqual(['annotation.created'])

    const asAdmin = await mcpAs(http.mcpUrl, admin)
    const theirs = await asAdmin.callTool({ name: 'get_changes', arguments: { sinceRev: 0 } })
    expect(permissionTypes((theirs.structuredContent as { events: { type: string }[] }).events)).toEqual(['permission.requested', 'permission.answered', 'permission.requested'])
  })
})
