/** The team inbox, store and credential level: identities as events, one-time sign-in codes, hashes only, constant-time checks. */
import { performance } from 'node:perf_hooks'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryStore, openStore, runAs, type Store, type StoreEvent } from '../../../src/store/index.js'
import { addAgent, addPerson, Authenticator, DEFAULT_SESSION_TTL_MS, SIGN_IN_TTL_MS } from '../../../src/auth/identities.js'
import { verifySecret } from '../../../src/auth/credentials.js'
import { tempDir } from '../../helpers/store.js'
import { codeOf } from '../../helpers/http.js'

const PUBLIC = 'http://mg.test:4848'

let stores: Store[] = []
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()))
  stores = []
})

function store(now?: () => Date): Store {
  const s = createMemoryStore(now ? { clock: now } : {})
  stores.push(s)
  return s
}

describe('identities in the store', () => {
  it('adds people and agents through commands: events in the log, secrets never in what is handed out', async () => {
    const s = store()
    const seen: StoreEvent[] = []
    s.changes$.subscribe((e) => seen.push(e))
    const alice = await addPerson(s, 'Alice Martin', { role: 'admin', publicUrl: PUBLIC })
    const agent = await addAgent(s, 'ci-agent')
    expect(alice.identity).toMatchObject({ name: 'Alice Martin', kind: 'person', role: 'admin' })
    expect(alice.link).toMatch(/^http:\/\/mg\.test:4848\/sign-in#code=mgc_/)
    expect(agent.token).toMatch(/^mga_/)
    expect(seen.map((e) => e.type)).toEqual(['identity.added', 'credential.issued', 'identity.added', 'credential.issued'])
    const text = JSON.stringify([seen, s.changesSince(0)])
    expect(text).not.toContain('scrypt$')
    expect(text).not.toContain(agent.token.split('.')[1])
    // The state keeps hashes, never the secret.
    expect(JSON.stringify(s.getState().credentials)).toContain('scrypt$')
    expect(JSON.stringify(s.getState().credentials)).not.toContain(agent.token.split('.')[1])
    await expect(addAgent(s, 'CI-AGENT')).rejects.toMatchObject({ code: 'INVALID_PARAMS' })
    await expect(s.identities.add({ name: 'x', kind: 'agent', role: 'admin' })).rejects.toMatchObject({ code: 'INVALID_PARAMS' })
  })

  it('records who made each change (by), keeping author', async () => {
    const s = store()
    const { identity } = await addAgent(s, 'ci-agent')
    const session = await s.createSession({ url: 'http://app.test/' })
    const alice = { id: 'idn_a', name: 'Alice', kind: 'person' as const }
    const a = await runAs(alice, () => s.addAnnotation({ sessionId: session.id, comment: 'Fix this' }))
    expect(a.by).toEqual(alice)
    const agent = { id: identity.id, name: identity.name, kind: identity.kind }
    const acked = await runAs(agent, () => s.acknowledge(a.id, { message: 'On it' }))
    expect(acked.replies[0]).toMatchObject({ author: 'agent', by: agent, message: 'On it' })
    const events = s.changesSince(0).filter((e) => e.sessionId === session.id)
    expect(events.map((e) => e.by?.name)).toEqual([undefined, 'Alice', 'ci-agent'])
  })

  it('survives a restart of a file store: identities and credentials come back from the snapshot and the log', async () => {
    const tmp = tempDir()
    try {
      const s1 = await openStore({ file: tmp.file })
      const { token } = await addAgent(s1, 'ci-agent')
      await s1.close()
      const s2 = await openStore({ file: tmp.file })
      stores.push(s2)
      expect(s2.identities.list().map((i) => i.name)).toEqual(['ci-agent'])
      expect(await new Authenticator(s2).authenticate(token)).toMatchObject({ identity: { name: 'ci-agent' } })
    } finally {
      tmp.cleanup()
    }
  })
})

describe('people and agents added by another process (file store)', () => {
  it('a running store can use a token and a sign-in link that another process added and compacted away on close', async () => {
    const tmp = tempDir()
    let closeLater: Store | undefined
    try {
      const running = await openStore({ file: tmp.file, pollIntervalMs: 0, watchFiles: false })
      closeLater = running
      // What `marginalia agents add` / `people add` do: open, add, close (the close folds the log
      // into the snapshot, so the running store reads these events from the snapshot's window).
      const cli = await openStore({ file: tmp.file, pollIntervalMs: 0, watchFiles: false })
      const { token } = await addAgent(cli, 'ci-agent')
      const { link } = await addPerson(cli, 'Alice', { publicUrl: PUBLIC })
      await cli.close()
      await running.sync()
      expect(running.identities.list().map((i) => i.name)).toEqual(['ci-agent', 'Alice'])
      const auth = new Authenticator(running)
      expect(await auth.authenticate(token)).toMatchObject({ identity: { name: 'ci-agent' } })
      expect(await auth.redeem(codeOf(link), DEFAULT_SESSION_TTL_MS)).toMatchObject({ identity: { name: 'Alice' } })
    } finally {
      await closeLater?.close()
      tmp.cleanup()
    }
  })
})

describe('sign-in codes and tokens', () => {
  it('a sign-in link works once', async () => {
    const s = store()
    const { link } = await addPerson(s, 'Alice', { publicUrl: PUBLIC })
    const auth = new Authenticator(s)
    const session = await auth.redeem(codeOf(link), DEFAULT_SESSION_TTL_MS)
    expect(session.identity.name).toBe('Alice')
    expect(await auth.authenticate(session.token)).toMatchObject({ actor: { name: 'Alice', kind: 'person' } })
    await expect(auth.redeem(codeOf(link), DEFAULT_SESSION_TTL_MS)).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
    // Two exchanges at once: exactly one wins.
    const again = await addPerson(s, 'Bob', { publicUrl: PUBLIC })
    const both = await Promise.allSettled([auth.redeem(codeOf(again.link), 1000), auth.redeem(codeOf(again.link), 1000)])
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
  })

  it('an expired sign-in link does not work, nor an expired session', async () => {
    let t = Date.UTC(2026, 0, 1)
    const now = () => new Date(t)
    const s = store(now)
    const auth = new Authenticator(s, now)
    const { link } = await addPerson(s, 'Alice', { publicUrl: PUBLIC, now })
    t += SIGN_IN_TTL_MS + 1
    await expect(auth.redeem(codeOf(link), 1000)).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
    const fresh = await addPerson(s, 'Bob', { publicUrl: PUBLIC, now })
    const { token } = await auth.redeem(codeOf(fresh.link), 60_000)
    expect(await auth.authenticate(token)).toBeDefined()
    t += 60_001
    expect(await auth.authenticate(token)).toBeUndefined()
  })

  it('revoking someone ends every credential of theirs at once', async () => {
    const s = store()
    const auth = new Authenticator(s)
    const agent = await addAgent(s, 'ci-agent')
    expect(await auth.authenticate(agent.token)).toBeDefined()
    await s.identities.revoke(agent.identity.id)
    expect(await auth.authenticate(agent.token)).toBeUndefined()
    expect(s.identities.get(agent.identity.id)?.revokedAt).toBeDefined()
    await expect(s.identities.revoke(agent.identity.id)).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
  })

  it('a wrong secret costs as long as a right one: no early exit', async () => {
    const s = store()
    const { token } = await addAgent(s, 'ci-agent')
    const id = token.slice(4, 24)
    const stored = s.identities.credential(id)!
    const wrongSecret = `${token.slice(0, -4)}AAAA` // same record, last characters wrong
    const wrongFirst = `${token.slice(0, 25)}${'A'.repeat(token.length - 25)}` // differs from the first secret character
    const time = async (secret: string, record = stored) => {
      const t0 = performance.now()
      await verifySecret(secret, 'agent_token', record)
      return performance.now() - t0
    }
    const median = async (secret: string, record?: typeof stored) => {
      const xs: number[] = []
      for (let i = 0; i < 7; i++) xs.push(await time(secret, record))
      return xs.sort((a, b) => a - b)[3]!
    }
    expect(await verifySecret(token, 'agent_token', stored)).toBe(true)
    expect(await verifySecret(wrongSecret, 'agent_token', stored)).toBe(false)
    expect(await verifySecret(token, 'agent_token', undefined)).toBe(false)
    const right = await median(token)
    const wrongLate = await median(wrongSecret)
    const wrongEarly = await median(wrongFirst)
    const unknown = await median(token, undefined)
    // All four do the full scrypt: none is a fraction of the others (an early exit would be microseconds).
    for (const t of [wrongLate, wrongEarly, unknown]) {
      expect(t / right).toBeGreaterThan(0.5)
      expect(t / right).toBeLessThan(2)
    }
  })
})
