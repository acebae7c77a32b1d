/** A sign-in ends: a session minted from it (the overlay's) expires with it, ends with it, and cannot mint again. */
import { describe, expect, it } from 'vitest'
import { addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore, openStore, type Store } from '../../../src/store/index.js'
import { PG_URL, describePg, dropSchema, freshSchema } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, SseClient, bearer, codeOf } from '../../helpers/http.js'

const APP = 'http://app.test:5173'
const OTHER_APP = 'http://other-app.test:5173'

const cleanups = useCleanups()

async function team(ttlMs = 3_000, rate: { ratePerSecond?: number; rateBurst?: number } = {}, open: () => Promise<Store> | Store = createMemoryStore) {
  let now = Date.UTC(2026, 0, 1, 12, 0, 0)
  const store = await open()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { allowOrigins: [APP, OTHER_APP], team: { sessionTtlMs: ttlMs, clock: () => new Date(now), ...rate } })
  const added = await addPerson(store, 'Ada', { publicUrl: http.url, role: 'admin' })
  const redeemed = await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(added.link) } })
  expect(redeemed.status).toBe(200)
  /** Mint as the sign-in popup does: from the server's own origin. */
  const mint = (token: string, origin = APP, from: string | null = http.url) =>
    request(`${http.url}/auth/token`, { method: 'POST', headers: { ...bearer(token), ...(from !== null ? { Origin: from } : {}) }, body: { origin } })
  return {
    store,
    url: http.url,
    signedIn: { token: redeemed.json.token as string, expiresAt: redeemed.json.expiresAt as string },
    mint,
    advance: (ms: number) => (now += ms),
  }
}

/** An admin route, from the app the token was handed to. */
const adminRoute = (url: string, token: string) => request(`${url}/api/identities`, { headers: { ...bearer(token), Origin: APP } })

describe('a minted session is part of its sign-in', () => {
  it('under a 3 s session TTL, a minted token expires with the sign-in session, never later', async () => {
    const { url, signedIn, mint, advance } = await team()
    const first = await mint(signedIn.token)
    expect(first.status).toBe(200)
    expect(first.json.expiresAt <= signedIn.expiresAt).toBe(true)
    advance(2_000)
    const second = await mint(signedIn.token)
    expect(second.status).toBe(200)
    expect(second.json.expiresAt).toBe(signedIn.expiresAt) // not 2 s + 3 s from the start
    expect((await adminRoute(url, second.json.token)).status).toBe(200)
    advance(1_100)
    for (const token of [signedIn.token, first.json.token, second.json.token]) expect((await adminRoute(url, token)).status).toBe(401)
  })

  it('a minted token cannot mint again: the chain has one link', async () => {
    const { signedIn, mint } = await team(60_000)
    const child = await mint(signedIn.token)
    expect(child.status).toBe(200)
    const grandchild = await mint(child.json.token)
    expect(grandchild.status).toBe(403)
  })

  it('minting answers only the sign-in flow on the server\'s own origin', async () => {
    const { signedIn, mint } = await team(60_000)
    expect((await mint(signedIn.token, APP, APP)).status).toBe(403) // from the app's page (an allowed origin for the API)
    expect((await mint(signedIn.token, APP, null)).status).toBe(403) // no Origin: not the popup
    expect((await mint(signedIn.token, APP)).status).toBe(200)
  })

  it('a minted token works from the app it was handed to, not from another', async () => {
    const { url, signedIn, mint } = await team(60_000)
    const child = (await mint(signedIn.token, APP)).json.token as string
    expect((await request(`${url}/api/annotations`, { headers: { ...bearer(child), Origin: APP } })).status).toBe(200)
    expect((await request(`${url}/api/annotations`, { headers: { ...bearer(child), Origin: OTHER_APP } })).status).toBe(403)
  })

  it('signing out ends every token of that sign-in, and closes their streams', async () => {
    const { url, signedIn, mint } = await team(60_000)
    const a = (await mint(signedIn.token, APP)).json.token as string
    const b = (await mint(signedIn.token, OTHER_APP)).json.token as string
    const stream = await SseClient.open(`${url}/api/events`, { ...bearer(a), Origin: APP })
    cleanups.push(() => stream.close())
    expect(stream.status).toBe(200)
    // Signing out with a minted token ends the sign-in session too.
    expect((await request(`${url}/auth/sign-out`, { method: 'POST', headers: { ...bearer(b), Origin: OTHER_APP } })).status).toBe(200)
    await stream.ended$(1_000)
    expect((await adminRoute(url, a)).status).toBe(401)
    expect((await request(`${url}/auth/me`, { headers: bearer(signedIn.token) })).status).toBe(401)
    expect((await request(`${url}/auth/me`, { headers: { ...bearer(b), Origin: OTHER_APP } })).status).toBe(401)
  })

  it('minting buys no requests: the rate limit is one budget per identity', async () => {
    const { url, signedIn, mint } = await team(60_000, { ratePerSecond: 1, rateBurst: 6 })
    const tokens = [signedIn.token]
    for (let i = 0; i < 2; i++) tokens.push((await mint(signedIn.token, APP)).json.token as string) // two requests of the budget
    let ok = 0
    for (let round = 0; round < 4; round++) for (const token of tokens) if ((await adminRoute(url, token)).status === 200) ok++
    expect(ok).toBe(4) // 6 in the burst, 2 spent minting; the clock stands still
  })
})

const pgSuite = await describePg('a minted session on PostgreSQL')

pgSuite('a minted session on PostgreSQL', () => {
  it('records its sign-in: another server on the same database refuses it once the sign-in is signed out, and after it expires', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const open = () => openStore({ url: PG_URL, schema, pollIntervalMs: 0, onError: () => {} })
    const { signedIn, mint } = await team(3_000, {}, open)
    const child = (await mint(signedIn.token, APP)).json.token as string
    const later = (await mint(signedIn.token, APP)).json.token as string
    // A second server sharing the database.
    const store2 = await open()
    cleanups.push(() => store2.close())
    const http2 = await serve(store2, cleanups, { allowOrigins: [APP], team: { clock: () => new Date(Date.UTC(2026, 0, 1, 12, 0, 0)) } })
    expect((await adminRoute(http2.url, child)).status).toBe(200)
    expect((await request(`${http2.url}/auth/sign-out`, { method: 'POST', headers: { ...bearer(child), Origin: APP } })).status).toBe(200)
    expect((await adminRoute(http2.url, later)).status).toBe(401)
    expect((await request(`${http2.url}/auth/me`, { headers: bearer(signedIn.token) })).status).toBe(401)
  })

  it('expires with its sign-in on another server too', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const open = () => openStore({ url: PG_URL, schema, pollIntervalMs: 0, onError: () => {} })
    const { signedIn, mint, advance } = await team(3_000, {}, open)
    advance(2_000)
    const child = await mint(signedIn.token, APP) // 2 s into a 3 s sign-in: 1 s left, not 3
    expect(child.json.expiresAt).toBe(signedIn.expiresAt)
    let now = Date.UTC(2026, 0, 1, 12, 0, 2)
    const store2 = await open()
    cleanups.push(() => store2.close())
    const http2 = await serve(store2, cleanups, { allowOrigins: [APP], team: { clock: () => new Date(now) } })
    expect((await adminRoute(http2.url, child.json.token)).status).toBe(200)
    now += 1_100
    expect((await adminRoute(http2.url, child.json.token)).status).toBe(401)
  })
})
