/**
 * The live connection the tabs of an app share, against a real server: one tab reads the stream
 * and says what it reads on a BroadcastChannel (Node's: instances of one name hear each other);
 * every tab's subscriber gets each event once, in order, from its own rev; when the tab holding
 * the connection goes, the next in line for the lock resumes from the newest rev heard.
 */
import { describe, expect, it } from 'vitest'
import { SharedLive, type LiveLink } from '../../../../src/browser/shared/shared-live.js'
import type { LiveHandlers } from '../../../../src/browser/shared/live.js'
import type { StoreEvent } from '../../../../src/browser/shared/types.js'
import { createMemoryStore, startHttpServer } from '../../../../src/index.js'
import { useCleanups } from '../../../helpers/cleanup.js'
import { until } from '../../../helpers/eventually.js'

const cleanups = useCleanups()

/** Web Locks as a browser grants them: one holder per name, the others in line, in order. */
class Locks {
  private readonly held = new Set<string>()
  private readonly waiting = new Map<string, (() => void)[]>()
  request(name: string, callback: () => Promise<unknown> | unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const run = () => {
        this.held.add(name)
        Promise.resolve()
          .then(() => callback())
          .then(resolve, reject)
          .finally(() => {
            this.held.delete(name)
            this.waiting.get(name)?.shift()?.()
          })
      }
      if (this.held.has(name)) this.waiting.set(name, [...(this.waiting.get(name) ?? []), run])
      else run()
    })
  }
}

async function setup() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await startHttpServer(store, { port: 0, log: () => {} })
  cleanups.push(() => http.close())
  const locks = new Locks()
  const name = `marginalia-live:test-${Math.random()}`
  const tab = () => {
    const channel = new BroadcastChannel(name)
    const live = new SharedLive(`${http.url}/api/events?permissions=1`, { locks: locks as unknown as LockManager, channel, lockName: name, retryMs: 20, maxRetryMs: 50 })
    cleanups.push(() => live.close())
    return live
  }
  return { store, http, tab, name }
}

/** A subscriber that writes down what it gets. */
function follower(): { handlers: LiveHandlers; events: StoreEvent[]; resets: number; opens: number } {
  const got = { events: [] as StoreEvent[], resets: 0, opens: 0 }
  const handlers: LiveHandlers = { event: (e) => void got.events.push(e), reset: () => void got.resets++, presence: () => {}, open: () => void got.opens++, down: () => {} }
  return Object.assign(got, { handlers })
}

/** Two tabs on one session's page; the first connected, the second's page not loaded yet. */
async function twoTabs() {
  const { store, tab, name } = await setup()
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const start = store.rev
  const [a, b] = [tab(), tab()]
  const fa = follower()
  a.open(start, fa.handlers)
  await until(() => a.leading && fa.opens === 1, 'connected', 5_000)
  return { store, name, session, start, a, b, fa }
}

const comments = (events: StoreEvent[]) => events.flatMap((e) => (e.type === 'annotation.created' ? [e.annotation.comment] : []))

describe('the live connection the tabs share', () => {
  it('one tab reads the stream and every tab gets each event once, in order; the next tab in line takes over from the newest rev heard', async () => {
    const { store, tab } = await setup()
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const [a, b, c] = [tab(), tab(), tab()]
    const [fa, fb, fc] = [follower(), follower(), follower()]
    const links: LiveLink[] = [a.open(store.rev, fa.handlers)]
    await until(() => a.leading && fa.opens === 1, 'the first tab connected', 5_000)
    links.push(b.open(store.rev, fb.handlers), c.open(store.rev, fc.handlers))
    // The others stay out of the server's way.
    expect([a.leading, b.leading, c.leading]).toEqual([true, false, false])

    for (const comment of ['one', 'two', 'three']) await store.addAnnotation({ sessionId: session.id, comment })
    await until(() => [fa, fb, fc].every((f) => comments(f.events).length === 3), 'three events in every tab', 5_000)
    for (const f of [fa, fb, fc]) expect(comments(f.events)).toEqual(['one', 'two', 'three'])
    expect(links.map((l) => l.rev)).toEqual([store.rev, store.rev, store.rev])

    // The tab holding the connection closes: the next in line leads, from the newest rev heard.
    a.close()
    await until(() => b.leading, 'the second tab leads', 5_000)
    await store.addAnnotation({ sessionId: session.id, comment: 'four' })
    await until(() => comments(fb.events).length === 4 && comments(fc.events).length === 4, 'the next event in the tabs left', 5_000)
    for (const f of [fb, fc]) expect(comments(f.events)).toEqual(['one', 'two', 'three', 'four'])
    expect(c.leading).toBe(false)
    expect(fb.resets + fc.resets).toBe(0)
  })

  it('a subscriber opened from an older rev catches up on what the tab heard, none twice; a forged message on the channel is ignored', async () => {
    const { store, name, session, start, b, fa } = await twoTabs()
    for (const comment of ['one', 'two']) await store.addAnnotation({ sessionId: session.id, comment })
    await until(() => comments(fa.events).length === 2, 'heard', 5_000)
    // The second tab heard them on the channel before its page had loaded anything.
    await until(() => (b as unknown as { heardRev?: number }).heardRev === store.rev, 'the second tab heard them', 5_000)

    const forger = new BroadcastChannel(name)
    cleanups.push(() => forger.close())
    forger.postMessage({ marginalia: 1, kind: 'event', event: { type: 'annotation.created', annotation: { comment: 'forged, no rev' } } })
    forger.postMessage({ marginalia: 2, kind: 'reset' })
    forger.postMessage('hello')

    const fb = follower()
    b.open(start, fb.handlers)
    await until(() => comments(fb.events).length === 2, 'caught up', 5_000)
    await store.addAnnotation({ sessionId: session.id, comment: 'three' })
    await until(() => comments(fb.events).length === 3, 'live after', 5_000)
    expect(comments(fb.events)).toEqual(['one', 'two', 'three'])
    expect(fb.resets).toBe(0)
    expect(b.leading).toBe(false)
  })

  it('when the server comes back, a tab that is not holding the connection has it reconnect now, not after its backoff', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    let http = await startHttpServer(store, { port: 0, log: () => {} })
    const port = Number(new URL(http.url).port)
    cleanups.push(() => http.close())
    const locks = new Locks()
    const name = `marginalia-live:restart-${Math.random()}`
    // A backoff far longer than the test: only the follower's nudge can bring the stream back in time.
    const tab = () => new SharedLive(`${http.url}/api/events?permissions=1`, { locks: locks as unknown as LockManager, channel: new BroadcastChannel(name), lockName: name, retryMs: 60_000, maxRetryMs: 60_000 })
    const [a, b] = [tab(), tab()]
    cleanups.push(() => a.close(), () => b.close())
    const [fa, fb] = [follower(), follower()]
    let downs = 0
    a.open(store.rev, fa.handlers)
    await until(() => a.leading && fa.opens === 1, 'connected', 5_000)
    const link = b.open(store.rev, { ...fb.handlers, down: () => void downs++ })

    await http.close()
    await until(() => downs === 1, 'the follower told the connection dropped', 5_000)
    const opensBefore = fb.opens
    http = await startHttpServer(store, { port, log: () => {} })
    link.retryNow()
    await until(() => fb.opens > opensBefore, 'connected again', 5_000)
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    await store.addAnnotation({ sessionId: session.id, comment: 'after the restart' })
    await until(() => comments(fb.events).length === 1, 'the event after the restart', 5_000)
    expect(comments(fb.events)).toEqual(['after the restart'])
  })

  it('a tab that comes after the connection opened is told by the leading tab that it is open and where the agent is', async () => {
    const { store, tab } = await setup()
    const a = tab()
    const fa = follower()
    a.open(store.rev, fa.handlers)
    await until(() => a.leading && fa.opens === 1, 'connected', 5_000)
    // This tab starts now: it heard none of what the leading tab said before.
    const late = tab()
    const fl = follower()
    const presences: unknown[] = []
    late.open(store.rev, { ...fl.handlers, presence: (p) => void presences.push(p) })
    await until(() => fl.opens === 1 && presences.length > 0, 'told how the connection is', 5_000)
    expect(late.leading).toBe(false)
    // A second subscriber in the same tab is told at once, from what the tab heard.
    const again = follower()
    late.open(store.rev, again.handlers)
    await until(() => again.opens === 1, 'told from what the tab heard', 5_000)
  })

  it('a subscriber opened from a rev older than the kept events is told to refetch, then goes on live', async () => {
    const { store, session, start, b } = await twoTabs()
    for (let i = 0; i < 520; i++) await store.addAnnotation({ sessionId: session.id, comment: `n${i}` })
    await until(() => (b as unknown as { heardRev?: number }).heardRev === store.rev, 'the second tab heard them all', 10_000)
    const fb = follower()
    b.open(start, fb.handlers)
    await until(() => fb.resets === 1, 'told to refetch', 5_000)
    expect(fb.events).toEqual([])
    await store.addAnnotation({ sessionId: session.id, comment: 'live' })
    await until(() => comments(fb.events).length === 1, 'live after the refetch', 5_000)
    expect(comments(fb.events)).toEqual(['live'])
  })
})
