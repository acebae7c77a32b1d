import { describe, expect, it } from 'vitest'
import { Observable } from 'rxjs'
import { McpError, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema, type TextResourceContents } from '@modelcontextprotocol/sdk/types.js'
import { openStore, type Store, type StoreEvent, type StoreEventType } from '../../../src/index.js'
import { annotationUri, parseResourceUri, SESSIONS_URI, sessionUri, urisChangedBy } from '../../../src/mcp/resources.js'
import { memoryStore, tempDir } from '../../helpers/store.js'
import { connect } from '../../helpers/mcp.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { until } from '../../helpers/eventually.js'

const closers = useCleanups()

async function setup(store: Store = memoryStore(), options: Parameters<typeof connect>[1] = {}) {
  const home = await store.createSession({ url: 'http://localhost:5173/', name: 'home' })
  const cart = await store.createSession({ url: 'http://localhost:5173/cart' })
  const a1 = await store.addAnnotation({ sessionId: home.id, comment: 'Button overlaps the footer' })
  const a2 = await store.addAnnotation({ sessionId: cart.id, comment: 'Total is not bold' })
  const mcp = await connect(store, options)
  closers.push(() => mcp.close())
  const updated: string[] = []
  let listChanged = 0
  mcp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri))
  mcp.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++)
  return { store, mcp, home, cart, a1, a2, updated, listChanged: () => listChanged }
}

async function readJson(mcp: Awaited<ReturnType<typeof connect>>, uri: string) {
  const { contents } = await mcp.client.readResource({ uri })
  expect(contents).toHaveLength(1)
  const [content] = contents as TextResourceContents[]
  expect(content).toMatchObject({ uri, mimeType: 'application/json' })
  return JSON.parse(content!.text) as Record<string, unknown>
}

describe('resources', () => {
  it('declares resources with subscribe and listChanged, next to tools, prompts and logging', async () => {
    const { mcp } = await setup()
    expect(mcp.client.getServerCapabilities()).toMatchObject({ resources: { subscribe: true, listChanged: true }, logging: {}, tools: {}, prompts: {} })
  })

  it('lists marginalia://sessions and each session; the templates for sessions and annotations', async () => {
    const { mcp, home, cart } = await setup()
    const { resources } = await mcp.client.listResources()
    expect(resources.map((r) => r.uri)).toEqual([SESSIONS_URI, `marginalia://sessions/${home.id}`, `marginalia://sessions/${cart.id}`])
    for (const r of resources) {
      expect(r.mimeType).toBe('application/json')
      expect(r.description).toBeTruthy()
    }
    expect(resources[1]).toMatchObject({ name: 'http://localhost:5173/', title: 'home', description: `Session ${home.id}: 1 pending annotation(s).` })
    const { resourceTemplates } = await mcp.client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['marginalia://sessions/{id}', 'marginalia://annotations/{id}', 'marginalia://attachments/{id}'])
    for (const t of resourceTemplates) expect(t.description).toBeTruthy()
  })

  it('reads sessions, a session with its annotations, and an annotation, as JSON', async () => {
    const { mcp, store, home, a1 } = await setup()
    expect(await readJson(mcp, SESSIONS_URI)).toEqual({ sessions: store.listSessions(), count: 2 })
    const { annotations: all, ...session } = store.getSession(home.id)
    expect(await readJson(mcp, sessionUri(home.id))).toEqual({
      session,
      annotations: all.map((a) => expect.objectContaining({ id: a.id, comment: a.comment, replyCount: a.replies.length })),
      count: all.length,
      total: all.length,
    })
    const { annotation } = (await readJson(mcp, annotationUri(a1.id))) as { annotation: { id: string; comment: string } }
    expect(annotation).toEqual(store.getAnnotation(a1.id))
  })

  it('an unknown id is "resource not found" (-32602 with data { uri }) naming the URI', async () => {
    const { mcp } = await setup()
    for (const uri of ['marginalia://sessions/ses_missing', 'marginalia://annotations/ann_missing']) {
      const error = await mcp.client.readResource({ uri }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(McpError)
      expect(error).toMatchObject({ code: -32602, data: { uri } })
      expect((error as McpError).message).toContain(uri)
    }
  })

  it('every kind of store event names the resources it changes', () => {
    const base = { rev: 1, at: '2025-01-01T00:00:00.000Z', sessionId: 'ses_1' }
    const annotation = { ...base, annotationId: 'ann_1' }
    // A Record over the kinds: a new kind of event fails to compile here until it is placed.
    const events: Record<StoreEventType, StoreEvent> = {
      'session.created': { ...base, type: 'session.created', session: { id: 'ses_1', url: 'http://localhost/', createdAt: base.at, updatedAt: base.at, rev: 1 } },
      'annotation.created': { ...annotation, type: 'annotation.created', annotation: { id: 'ann_1', sessionId: 'ses_1', status: 'pending', comment: 'x', replies: [], createdAt: base.at, updatedAt: base.at, rev: 1 } },
      'annotation.status_changed': { ...annotation, type: 'annotation.status_changed', action: 'acknowledge', from: 'pending', to: 'acknowledged' },
      'annotation.replied': { ...annotation, type: 'annotation.replied', reply: { id: 'rep_1', author: 'human', message: 'hi', createdAt: base.at } },
      'annotation.deleted': { ...annotation, type: 'annotation.deleted', from: 'pending' },
      'annotation.archived': { ...annotation, type: 'annotation.archived', from: 'resolved', archiveFile: '2025-01-01.jsonl' },
      'identity.added': { ...base, sessionId: '', type: 'identity.added', identity: { id: 'idn_1', name: 'Alice', kind: 'person', role: 'person', createdAt: base.at } },
      'identity.revoked': { ...base, sessionId: '', type: 'identity.revoked', identityId: 'idn_1' },
      'credential.issued': { ...base, sessionId: '', type: 'credential.issued', credential: { id: 'c1', identityId: 'idn_1', kind: 'session', createdAt: base.at } },
      'credential.ended': { ...base, sessionId: '', type: 'credential.ended', credentialId: 'c1', identityId: 'idn_1', reason: 'signed_out' },
      'capture.requested': { ...annotation, type: 'capture.requested', requestId: 'cap_1', url: 'http://localhost/', expiresAt: base.at },
      'capture.taken': {
        ...annotation,
        type: 'capture.taken',
        requestId: 'cap_1',
        url: 'http://localhost/',
        anchor: 'found',
        capturedAt: base.at,
        attachment: { id: 'att_1', kind: 'screenshot', mime: 'image/png', bytes: 1, width: 1, height: 1, sha256: 'a'.repeat(64) },
      },
      'permission.requested': { ...base, sessionId: '', type: 'permission.requested', requestId: 'abcde', toolName: 'Bash', description: 'Run tests', inputPreview: 'npm test', expiresAt: base.at },
      'permission.answered': { ...base, sessionId: '', type: 'permission.answered', requestId: 'abcde', behavior: 'allow' },
    }
    for (const [kind, event] of Object.entries(events)) {
      // Identity events, a browser's pictures for an agent and permission requests change no resource.
      const expected = kind.startsWith('identity.') || kind.startsWith('credential.') || kind.startsWith('capture.') || kind.startsWith('permission.') ? [] : kind === 'session.created' ? [SESSIONS_URI, sessionUri('ses_1')] : [annotationUri('ann_1'), sessionUri('ses_1')]
      expect(urisChangedBy(event), kind).toEqual(expected)
    }
    expect(() => urisChangedBy({ ...base, type: 'annotation.teleported' } as unknown as StoreEvent)).toThrow(/unknown event type "annotation.teleported"/)
  })

  it('URIs round-trip, also for ids that need escaping', () => {
    expect(parseResourceUri(SESSIONS_URI)).toEqual({ kind: 'sessions' })
    expect(parseResourceUri(sessionUri('a/b c'))).toEqual({ kind: 'session', id: 'a/b c' })
    expect(parseResourceUri(annotationUri('ann_1'))).toEqual({ kind: 'annotation', id: 'ann_1' })
    expect(parseResourceUri('marginalia://other/1')).toBeUndefined()
    expect(parseResourceUri('https://example.com/')).toBeUndefined()
  })
})

describe('resource subscriptions', () => {
  it('a subscribed annotation URI gets notifications/resources/updated for its own changes only', async () => {
    const { mcp, store, a1, a2, updated } = await setup()
    await mcp.client.subscribeResource({ uri: annotationUri(a1.id) })
    await store.acknowledge(a2.id) // another annotation, another session: nothing for us
    await store.acknowledge(a1.id)
    await until(() => updated.length >= 1, 'the update')
    await store.reply(a1.id, { author: 'human', message: 'Thanks' })
    await until(() => updated.length >= 2, 'the second update')
    await mcp.client.ping()
    expect(updated).toEqual([annotationUri(a1.id), annotationUri(a1.id)])
  })

  it('a session URI is updated by its annotations’ events; marginalia://sessions and list_changed by new sessions', async () => {
    const { mcp, store, home, cart, a1, a2, updated, listChanged } = await setup()
    await mcp.client.subscribeResource({ uri: sessionUri(home.id) })
    await mcp.client.subscribeResource({ uri: SESSIONS_URI })
    await store.resolve(a2.id) // the cart session: not subscribed
    const a3 = await store.addAnnotation({ sessionId: home.id, comment: 'Logo is blurry' })
    await store.dismiss(a1.id, { reason: 'Intended' })
    await store.deleteAnnotation(a3.id)
    await until(() => updated.length >= 3, 'three session updates')
    expect(listChanged()).toBe(0) // annotations do not change the list of resources
    const fresh = await store.createSession({ url: 'http://localhost:5173/about' })
    await until(() => updated.length >= 4 && listChanged() >= 1, 'the sessions update and list_changed')
    await mcp.client.ping()
    expect(updated).toEqual([sessionUri(home.id), sessionUri(home.id), sessionUri(home.id), SESSIONS_URI])
    expect(listChanged()).toBe(1)
    expect(fresh.id).not.toBe(cart.id)
    expect((await mcp.client.listResources()).resources.map((r) => r.uri)).toContain(sessionUri(fresh.id))
  })

  it('unsubscribe stops the notifications', async () => {
    const { mcp, store, a1, a2, updated } = await setup()
    await mcp.client.subscribeResource({ uri: annotationUri(a1.id) })
    await mcp.client.subscribeResource({ uri: annotationUri(a2.id) })
    await mcp.client.unsubscribeResource({ uri: annotationUri(a1.id) })
    await store.acknowledge(a1.id)
    await store.acknowledge(a2.id) // still subscribed: a marker that everything before it has been delivered
    await until(() => updated.length >= 1, 'the marker')
    await mcp.client.ping()
    expect(updated).toEqual([annotationUri(a2.id)])
  })

  it('subscribe refuses what read refuses, with the same code: a URI this server does not serve, an unknown id, an invalid URI', async () => {
    const { mcp } = await setup()
    for (const uri of ['marginalia://nonsense', 'marginalia://annotations/ann_missing', 'marginalia://attachments/nope', 'https://example.com/x', 'test://watched-resource']) {
      const read = await mcp.client.readResource({ uri }).then(() => undefined, (e: McpError) => e)
      const subscribe = await mcp.client.subscribeResource({ uri }).then(() => undefined, (e: McpError) => e)
      // One not-found code for every resource (the SDK's: -32602 with data { uri }, as the 2026-07-28 revision requires).
      expect(read, uri).toMatchObject({ code: -32602, data: { uri } })
      expect(subscribe, uri).toMatchObject({ code: -32602, data: { uri } })
      expect(subscribe!.message).toContain('Resource not found')
    }
    const invalid = await mcp.client.subscribeResource({ uri: 'not a uri' }).then(() => undefined, (e: McpError) => e)
    expect(invalid).toMatchObject({ code: -32602, data: { uri: 'not a uri', reason: 'invalid_uri' } })
    expect(await mcp.client.readResource({ uri: 'not a uri' }).then(() => undefined, (e: McpError) => e)).toMatchObject({ code: -32602, data: { reason: 'invalid_uri' } })
    // What exists is subscribable: the session list, a session, an annotation.
    await expect(mcp.client.subscribeResource({ uri: 'marginalia://sessions' })).resolves.toEqual({})
  })

  it('a resource an embedder registers is subscribable like Marginalia\'s own', async () => {
    const mcp = await connect(memoryStore(), {}, (server) =>
      server.registerResource('watched', 'test://watched-resource', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri: uri.href, text: 'x' }] })),
    )
    closers.push(() => mcp.close())
    await expect(mcp.client.subscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual({})
    await expect(mcp.client.subscribeResource({ uri: 'test://other' })).rejects.toMatchObject({ code: -32602, data: { uri: 'test://other' } })
  })

  it('completes session ids for the work_loop prompt and the session template', async () => {
    const { mcp, store } = await setup()
    const ids = store.listSessions().map((s) => s.id)
    const prompt = await mcp.client.complete({ ref: { type: 'ref/prompt', name: 'work_loop' }, argument: { name: 'sessionId', value: 'ses_' } })
    expect([...prompt.completion.values].sort()).toEqual([...ids].sort())
    const byUrl = await mcp.client.complete({ ref: { type: 'ref/resource', uri: 'marginalia://sessions/{id}' }, argument: { name: 'id', value: store.listSessions()[0]!.url } })
    expect(byUrl.completion.values).toContain(ids[0])
  })

  it('follows changes made through another store on the same file (another process)', async () => {
    const { file, cleanup } = tempDir()
    const served = await openStore({ file })
    const other = await openStore({ file })
    closers.push(async () => {
      await other.close()
      await served.close()
      cleanup()
    })
    const { mcp, a1, updated } = await setup(served)
    await mcp.client.subscribeResource({ uri: annotationUri(a1.id) })
    await other.sync()
    await other.resolve(a1.id, { summary: 'Raised the footer' })
    await until(() => updated.length >= 1, 'the update from the other store', 5_000)
    expect(updated).toEqual([annotationUri(a1.id)])
    expect(await readJson(mcp, annotationUri(a1.id))).toMatchObject({ annotation: { status: 'resolved' } })
  })

  it('holds one store subscription per connection and releases it when the connection closes', async () => {
    const base = memoryStore()
    let active = 0
    const counted = new Observable<StoreEvent>((subscriber) => {
      active++
      const inner = base.changes$.subscribe(subscriber)
      return () => {
        active--
        inner.unsubscribe()
      }
    })
    const store = new Proxy(base, { get: (target, key) => (key === 'changes$' ? counted : Reflect.get(target, key, target)) }) as Store
    const { mcp } = await setup(store)
    await until(() => active === 1, 'the store subscription')
    await mcp.client.subscribeResource({ uri: SESSIONS_URI })
    expect(active).toBe(1)
    await mcp.close()
    await until(() => active === 0, 'the release')
  })
})

describe('the work_loop prompt', () => {
  it('is listed with a description and an optional sessionId argument', async () => {
    const { mcp } = await setup()
    const { prompts } = await mcp.client.listPrompts()
    expect(prompts).toEqual([
      expect.objectContaining({
        name: 'work_loop',
        title: 'Marginalia work loop',
        description: expect.stringMatching(/watch .*acknowledge .*fix the code.*resolve, reply or dismiss.*watch again/),
        arguments: [expect.objectContaining({ name: 'sessionId', required: false, description: expect.any(String) })],
      }),
    ])
  })

  it('renders the loop for every session', async () => {
    const { mcp } = await setup()
    const prompt = await mcp.client.getPrompt({ name: 'work_loop' })
    expect(prompt.messages).toHaveLength(1)
    expect(prompt.messages[0]!.role).toBe('user')
    const text = (prompt.messages[0]!.content as { text: string }).text
    expect(text).toContain('Work on every session. There are 2 pending annotations right now.')
    expect(text).toMatch(/1\. watch_annotations — [\s\S]*2\. acknowledge — [\s\S]*3\. Fix the code[\s\S]*4\. resolve [\s\S]*dismiss[\s\S]*5\. watch_annotations again\./)
    expect(text).not.toContain('sessionId "')
  })

  it('focuses on one session when given its id; an unknown id is an error naming sessionId', async () => {
    const { mcp, home } = await setup()
    const prompt = await mcp.client.getPrompt({ name: 'work_loop', arguments: { sessionId: home.id } })
    const text = (prompt.messages[0]!.content as { text: string }).text
    expect(prompt.description).toBe(`Marginalia work loop for session ${home.id}`)
    expect(text).toContain(`Work on session "${home.id}" only: http://localhost:5173/ (home), 1 pending of 1 annotation(s).`)
    expect(text).toContain(`1. watch_annotations with sessionId "${home.id}"`)
    expect(text).toContain(`get_pending with sessionId "${home.id}"`)
    await expect(mcp.client.getPrompt({ name: 'work_loop', arguments: { sessionId: 'ses_missing' } })).rejects.toThrow(/sessionId: No session with id "ses_missing"/)
  })

  it('mentions only the tools the server exposes', async () => {
    const { mcp } = await setup(memoryStore(), { profile: 'read-only' })
    const text = ((await mcp.client.getPrompt({ name: 'work_loop' })).messages[0]!.content as { text: string }).text
    expect(text).not.toMatch(/acknowledge|resolve|dismiss/)
    expect(text).toContain('watch_annotations')
  })
})

describe('every tool and prompt has a description', () => {
  it('holds for the whole server', async () => {
    const { mcp } = await setup()
    for (const t of (await mcp.client.listTools()).tools) expect(t.description?.trim()).toBeTruthy()
    for (const p of (await mcp.client.listPrompts()).prompts) expect(p.description?.trim()).toBeTruthy()
  })
})
