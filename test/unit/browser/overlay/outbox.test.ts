/**
 * The overlay's outbox and sender, in Node against a real server: what the person wrote is kept
 * until the server has it, then sent exactly once — also when retries race or an answer is lost.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, type Store } from '../../../../src/index.js'
import { Api, ApiError, UnreachableError } from '../../../../src/browser/shared/api.js'
import { LazySender, Outbox, type OutboxItem, type SenderEvents } from '../../../../src/browser/overlay/sync/outbox.js'
import { Sender } from '../../../../src/browser/overlay/sync/sender.js'
import { PageSessions } from '../../../../src/browser/overlay/sync/sessions.js'
import type { Annotation, NewAnnotation } from '../../../../src/browser/shared/types.js'
import { serve } from '../../../helpers/http.js'
import { eventually } from '../../../helpers/eventually.js'
import { useCleanups } from '../../../helpers/cleanup.js'

const cleanups = useCleanups()

/** localStorage, in memory. */
class MemoryStorage implements Storage {
  private readonly map = new Map<string, string>()
  get length() {
    return this.map.size
  }
  clear() {
    this.map.clear()
  }
  getItem(key: string) {
    return this.map.get(key) ?? null
  }
  key(i: number) {
    return [...this.map.keys()][i] ?? null
  }
  removeItem(key: string) {
    this.map.delete(key)
  }
  setItem(key: string, value: string) {
    this.map.set(key, String(value))
  }
}

const PAGE = 'http://localhost:5173/checkout'

function item(comment: string, extra: Partial<OutboxItem> = {}): OutboxItem {
  const body: NewAnnotation = { comment, url: `${PAGE}?step=2`, element: { selector: '#pay' }, intent: 'fix', severity: 'blocking' }
  return { id: `c-${comment}`, queuedAt: new Date().toISOString(), pageKey: PAGE, pageTitle: 'Checkout', body, attempts: 0, ...extra }
}

function recorder() {
  const log: string[] = []
  const events: SenderEvents = {
    posting: (i) => log.push(`posting ${i.body.comment}`),
    sent: (i, a) => log.push(`sent ${i.body.comment} as ${a.id}`),
    blocked: (e) => log.push(`blocked ${e}`),
    drained: () => log.push('drained'),
    rejected: (i, e) => log.push(`rejected ${i.body.comment}: ${e}`),
  }
  return { log, events }
}

async function setup(api?: (base: string) => Api) {
  const store: Store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const storage = new MemoryStorage()
  const client = api ? api(http.url) : new Api(http.url, 5_000)
  const outbox = new Outbox(storage, 'marginalia:outbox:test')
  const sessions = new PageSessions(client, storage, 'marginalia:session:test:')
  const { log, events } = recorder()
  const sender = new Sender(client, outbox, sessions, events, { lockName: 'test', retryMs: 50, maxRetryMs: 200 })
  cleanups.push(() => sender.stop())
  return { store, http, storage, outbox, sessions, sender, log, events }
}

describe('outbox', () => {
  it('keeps items in storage across instances and ignores malformed data', () => {
    const storage = new MemoryStorage()
    const a = new Outbox(storage, 'k')
    a.add(item('one'))
    a.add(item('two'))
    a.update('c-one', { attempts: 2 })
    const b = new Outbox(storage, 'k')
    expect(b.list().map((i) => [i.body.comment, i.attempts])).toEqual([
      ['one', 2],
      ['two', 0],
    ])
    b.remove('c-one')
    expect(a.list().map((i) => i.id)).toEqual(['c-two'])
    storage.setItem('k', '[{"nope":1}, 42]')
    expect(a.list()).toEqual([])
    storage.setItem('k', '{not json')
    expect(() => a.list()).not.toThrow()
  })

  it('an item whose POST is on its way is not shown once the page has its stored copy; an older copy with the same words does not hide it', () => {
    const box = new Outbox(new MemoryStorage(), 'k')
    const waiting = item('Pay is cut off')
    box.add(waiting)
    box.add(item('other'))
    const stored = (id: string, comment = 'Pay is cut off'): Annotation => ({ id, sessionId: 's', status: 'pending', comment, url: waiting.body.url, element: { selector: '#pay' }, replies: [], createdAt: waiting.queuedAt, updatedAt: waiting.queuedAt, rev: 1 })
    const older = stored('ann_older')
    const comments = (known: Annotation[]) => box.shown(known).map((i) => i.body.comment)
    box.posting(waiting.id, [older])
    expect(comments([older])).toEqual(['Pay is cut off', 'other'])
    expect(comments([older, stored('ann_else', 'Something else')])).toEqual(['Pay is cut off', 'other'])
    expect(comments([older, stored('ann_new')])).toEqual(['other'])
    // The POST failed: it waits and is shown again, whatever the page has.
    box.posted()
    expect(comments([older, stored('ann_new')])).toEqual(['Pay is cut off', 'other'])
    expect(box.list()).toHaveLength(2)
  })

  it('works without storage (in memory for the page)', () => {
    const box = new Outbox(undefined, 'k')
    box.add(item('x'))
    expect(box.list()).toHaveLength(1)
    box.remove('c-x')
    expect(box.list()).toHaveLength(0)
  })
})

describe('sender', () => {
  it('creates the page session once, sends every item once, in order, and empties the outbox', async () => {
    const { store, outbox, sender, log, storage } = await setup()
    outbox.add(item('first'))
    outbox.add(item('second'))
    await Promise.all([sender.flush(), sender.flush(), sender.flush()])
    expect(store.getAllPending().map((a) => a.comment)).toEqual(['first', 'second'])
    expect(store.listSessions().map((s) => [s.url, s.name])).toEqual([[PAGE, 'Checkout']])
    expect(outbox.list()).toEqual([])
    expect(log.filter((l) => l.startsWith('sent'))).toHaveLength(2)
    expect(storage.getItem(`marginalia:session:test:${PAGE}`)).toBe(store.listSessions()[0]!.id)
    const [a] = store.getAllPending()
    expect(a).toMatchObject({ url: `${PAGE}?step=2`, element: { selector: '#pay' }, intent: 'fix', severity: 'blocking' })
  })

  it('reuses a session another browser made for the same page', async () => {
    const { store, outbox, sender } = await setup()
    const existing = await store.createSession({ url: PAGE })
    outbox.add(item('x'))
    await sender.flush()
    expect(store.listSessions()).toHaveLength(1)
    expect(store.getAllPending()[0]!.sessionId).toBe(existing.id)
  })

  it("finds its page's newest session by asking for that page's sessions only, and reads every session from a server without that filter", async () => {
    const asked: string[] = []
    let oldServer = false
    const { store, sessions } = await setup(
      (base) =>
        new Api(base, 5_000, undefined, (url, init) => {
          asked.push(new URL(url).search)
          // A server from before `?url=` refuses the parameter it does not know.
          if (oldServer && new URL(url).searchParams.has('url')) return Promise.resolve(new Response(JSON.stringify({ error: { code: 'INVALID_PARAMS', message: 'url: unknown' } }), { status: 400 }))
          return fetch(url, init)
        }),
    )
    for (let i = 0; i < 30; i++) await store.createSession({ url: `http://localhost:5173/page-${i}` })
    await store.createSession({ url: PAGE })
    const newest = await store.createSession({ url: PAGE })
    expect((await sessions.find(PAGE))?.id).toBe(newest.id)
    expect(asked).toEqual([`?limit=500&url=${encodeURIComponent(PAGE)}`])
    oldServer = true
    asked.length = 0
    expect((await sessions.find(PAGE))?.id).toBe(newest.id)
    expect(asked).toEqual([`?limit=500&url=${encodeURIComponent(PAGE)}`, '?limit=500'])
    expect(await sessions.find('http://localhost:5173/nowhere')).toBeUndefined()
  })

  it('keeps items while the server is unreachable and sends them once it is back', async () => {
    const { store, http, outbox, sender, log } = await setup()
    const port = http.port
    await http.close()
    outbox.add(item('kept'))
    await sender.flush()
    expect(log.at(-1)).toMatch(/^blocked Can't reach Marginalia/)
    expect(outbox.list().map((i) => i.body.comment)).toEqual(['kept'])
    expect(outbox.list()[0]!.lastError).toMatch(/Can't reach/)
    // Back on the same port: the scheduled retry delivers it.
    await serve(store, cleanups, { port })
    await eventually(() => store.getAllPending().map((a) => a.comment)).toEqual(['kept'])
    await eventually(() => outbox.list()).toEqual([])
    await sender.flush()
    expect(store.getAllPending()).toHaveLength(1)
  })

  it('does not send twice when the server stored it but the answer was lost', async () => {
    let loseNextAnswer = true
    const { store, outbox, sender } = await setup(
      (base) =>
        new (class extends Api {
          override async addAnnotation(sessionId: string, body: NewAnnotation): Promise<Annotation> {
            const stored = await super.addAnnotation(sessionId, body)
            if (loseNextAnswer) {
              loseNextAnswer = false
              throw new UnreachableError('connection reset')
            }
            return stored
          }
        })(base, 5_000),
    )
    outbox.add(item('once'))
    await sender.flush() // stored, but the sender heard "unreachable"
    expect(outbox.list()[0]).toMatchObject({ attempts: 1 })
    await eventually(() => outbox.list()).toEqual([]) // the retry found it in the session
    expect(store.getAllPending().map((a) => a.comment)).toEqual(['once'])
  })

  it('says which item it posts before the POST goes, and no item is in flight once the POST failed', async () => {
    let seen: string[] = []
    let fail = true
    const { store, outbox, sender, log, events } = await setup(
      (base) =>
        new (class extends Api {
          override async addAnnotation(sessionId: string, body: NewAnnotation): Promise<Annotation> {
            const stored = await super.addAnnotation(sessionId, body)
            // The server has it; the page heard of it (its event) before this answer.
            seen = outbox.shown([stored]).map((i) => i.body.comment)
            if (fail) {
              fail = false
              throw new UnreachableError('connection reset')
            }
            return stored
          }
        })(base, 5_000),
    )
    // What the overlay does when told: the page's annotations known when the POST goes.
    events.posting = (i) => {
      log.push(`posting ${i.body.comment}`)
      outbox.posting(i.id, store.getAllPending())
    }
    outbox.add(item('once'))
    await sender.flush()
    expect(seen).toEqual([])
    // The answer was lost: the item waits, and is shown although the server has a copy.
    expect(outbox.shown(store.getAllPending()).map((i) => i.body.comment)).toEqual(['once'])
    await eventually(() => outbox.list()).toEqual([])
    expect(log.filter((l) => l.startsWith('posting'))).toEqual(['posting once'])
  })

  it('starts a new session when the remembered one is gone (a new store)', async () => {
    const { store, outbox, sender, sessions } = await setup()
    sessions.remember(PAGE, 'ses_from_an_old_store')
    outbox.add(item('x'))
    await sender.flush()
    expect(store.listSessions()).toHaveLength(1)
    expect(sessions.stored(PAGE)).toBe(store.listSessions()[0]!.id)
    expect(store.getAllPending()).toHaveLength(1)
  })

  it('keeps what the server refuses for good (400) without retrying it, and goes on with the rest', async () => {
    const { store, outbox, sender, log } = await setup()
    outbox.add(item('bad', { body: { comment: '   ' } }))
    outbox.add(item('good'))
    await sender.flush()
    expect(store.getAllPending().map((a) => a.comment)).toEqual(['good'])
    expect(outbox.list()).toEqual([expect.objectContaining({ id: 'c-bad', rejected: expect.stringMatching(/comment/) })])
    expect(log).toContainEqual(expect.stringMatching(/^rejected/))
    await sender.flush()
    expect(store.getAllPending()).toHaveLength(1)
  })
})

describe('api client', () => {
  it('tells an unreachable server from an error answer', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const api = new Api(http.url)
    await expect(api.annotation('nope')).rejects.toMatchObject({ name: 'ApiError', status: 404, code: 'NOT_FOUND' })
    await expect(api.annotation('nope')).rejects.toBeInstanceOf(ApiError)
    await http.close()
    await expect(api.health()).rejects.toBeInstanceOf(UnreachableError)
  })
})

describe('the sender as the page holds it (fetched when something waits)', () => {
  async function lazy(fail = 0) {
    const parts = await setup()
    let made = 0
    let failures = fail
    const { log, events } = recorder()
    const make = async () => {
      made++
      if (failures-- > 0) throw new Error('the chunk could not be fetched')
      return parts.sender
    }
    const held = new LazySender(parts.outbox, make, events, 20, 80)
    cleanups.push(() => held.stop())
    return { ...parts, held, log, made: () => made }
  }

  it('with nothing sendable, a flush is drained at once and nothing is fetched', async () => {
    const { held, outbox, log, made } = await lazy()
    outbox.add(item('refused for good', { rejected: 'HTTP 400' }))
    await held.flush()
    held.retrySoon()
    expect(made()).toBe(0)
    expect(log).toEqual(['drained', 'drained'])
  })

  it('with something waiting, the sender is fetched once and sends it once, however many flushes ask', async () => {
    const { held, outbox, store, made } = await lazy()
    outbox.add(item('kept from the last visit'))
    await Promise.all([held.flush(), held.flush(), held.flush()])
    expect(made()).toBe(1)
    expect(store.getAllPending().map((a) => a.comment)).toEqual(['kept from the last visit'])
    expect(outbox.list()).toEqual([])
  })

  it('a sender that cannot be fetched leaves the item waiting, says so, and is tried again until it comes', async () => {
    const { held, outbox, store, log, made } = await lazy(2)
    outbox.add(item('while the server restarts'))
    await held.flush()
    expect(outbox.list()).toHaveLength(1)
    expect(log[0]).toContain('blocked Could not load the sender from the Marginalia server: the chunk could not be fetched')
    await eventually(() => store.getAllPending().map((a) => a.comment), 5_000).toEqual(['while the server restarts'])
    expect(made()).toBe(3)
    expect(outbox.list()).toEqual([])
  })
})
