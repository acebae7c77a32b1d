/**
 * Uploads nothing references cannot fill the disk: one person's unreferenced uploads of the last
 * hour stop at the quota (50 MiB by default: 429 naming the limit and the flag), per identity;
 * attaching an upload frees its share; unreferenced uploads are removed after the grace period
 * (10 minutes by default) by the server's sweep; a file store refuses an upload (507) when the disk
 * would keep less than the floor. The same quota and removal hold on PostgreSQL.
 *
 * Time is an injected clock and the sweep's interval a fake timer: nothing sleeps.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore, openStore, type Store } from '../../../src/index.js'
import { request, serve } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import { until } from '../../helpers/eventually.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { bearer, codeOf } from '../../helpers/who-seed.js'
import { PG_URL, describePg, dropSchema, freshSchema } from '../../helpers/pg.js'
import { parseUploadFlags } from '../../../src/cli/upload-flags.js'

const cleanups = useCleanups()
afterEach(() => void vi.useRealTimers())

const MiB = 1024 * 1024
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex')
/** A distinct valid PNG of `size` bytes (`n` fills the bytes after it). */
const image = (n: number, size: number) => Buffer.concat([PNG, Buffer.alloc(size - PNG.length, n)])
const GRACE = 10 * 60 * 1000

async function serverOn(store: Store, uploads: Record<string, number> = {}) {
  let now = Date.UTC(2026, 0, 1, 12)
  // Only the sweep's interval is fake; sockets and their timeouts run in real time.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
  const http = await serve(store, cleanups, { uploads: { clock: () => now, ...uploads } })
  const person = async (name: string) => {
    const added = await addPerson(store, name, { publicUrl: http.url })
    return (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(added.link) } })).json.token as string
  }
  const upload = (token: string, bytes: Buffer) => request(`${http.url}/api/attachments`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'image/png' }, body: bytes, timeoutMs: 30_000 })
  /** Let time pass: the clock moves, the sweep's interval fires, and its removals finish. */
  const advance = async (ms: number, expectBlobs: number) => {
    now += ms
    vi.advanceTimersByTime(60_000)
    await until(async () => (await store.blobs.list()).length === expectBlobs, `${expectBlobs} blobs left after the sweep`)
  }
  return { http, person, upload, advance }
}

describe('unreferenced uploads', () => {
  it('40 uploads of 1.5 MiB by one person hit the 50 MiB quota; attaching one frees its share; the sweep removes the rest after 10 minutes', { timeout: 60_000 }, async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const { http, person, upload, advance } = await serverOn(store)
    const alice = await person('Alice')
    const bob = await person('Bob')

    const statuses: number[] = []
    const shas: string[] = []
    let refused: Awaited<ReturnType<typeof upload>> | undefined
    for (let i = 1; i <= 40; i++) {
      const res = await upload(alice, image(i, 1.5 * MiB))
      statuses.push(res.status)
      if (res.status === 201) shas.push(res.json.sha256 as string)
      else refused ??= res
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(33)
    expect(statuses.slice(33)).toEqual(Array(7).fill(429))
    expect(refused!.json.error.message).toContain('limit of 50 MiB')
    expect(refused!.json.error.message).toContain('--upload-quota')
    expect(refused!.json.error.details).toMatchObject({ limit: 50 * MiB })
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThan(0)

    // The quota is Alice's: Bob still uploads.
    expect((await upload(bob, image(200, 1.5 * MiB))).status).toBe(201)
    // An upload an annotation references no longer counts: Alice has room for one more.
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const annotated = await request(`${http.url}/api/sessions/${session.id}/annotations`, {
      method: 'POST',
      headers: bearer(alice),
      body: { comment: 'See the screenshot', attachments: [{ id: 'att_1', kind: 'image', sha256: shas[0], mime: 'image/png', bytes: 1.5 * MiB, width: 1, height: 1 }] },
    })
    expect(annotated.status, annotated.text).toBe(201)
    expect((await upload(alice, image(41, 1.5 * MiB))).status).toBe(201)
    expect((await upload(alice, image(42, 1.5 * MiB))).status).toBe(429)

    // Ten minutes later the sweep has removed every unreferenced upload: only the attached one is left.
    await advance(GRACE + 1, 1)
    expect((await store.blobs.list()).map((b) => b.sha256)).toEqual([shas[0]])
    expect((await upload(alice, image(43, 1.5 * MiB))).status).toBe(201)
  })

  it('a file store refuses an upload with 507 when the disk would keep less than the floor', async () => {
    const { file } = testDir(cleanups, 'marginalia-uploads-')
    const store = await openStore({ file })
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { uploads: { minFreeBytes: Number.MAX_SAFE_INTEGER } })
    const res = await request(`${http.url}/api/attachments`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: image(1, 4096) })
    expect(res.status).toBe(507)
    expect(res.json.error.code).toBe('INSUFFICIENT_STORAGE')
    expect(res.json.error.message).toContain('--min-free-space')
    expect(await store.blobs.list()).toEqual([])
    // With the default floor the same upload is kept.
    const open = await serve(store, cleanups)
    expect((await request(`${open.url}/api/attachments`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: image(1, 4096) })).status).toBe(201)
  })
})

describe('the upload flags of marginalia serve', () => {
  it('set the quota, window, grace and floor; a bad value names the flag', () => {
    expect(parseUploadFlags({ 'upload-quota': '1048576', 'upload-window': '30m', 'upload-grace': '2m', 'min-free-space': '0' })).toEqual({ quotaBytes: 1048576, windowMs: 30 * 60_000, graceMs: 2 * 60_000, minFreeBytes: 0 })
    expect(parseUploadFlags({})).toEqual({})
    expect(() => parseUploadFlags({ 'upload-grace': '0' })).toThrow(/--upload-grace must be longer than 0/)
    expect(() => parseUploadFlags({ 'upload-quota': '50MB' })).toThrow(/--upload-quota must be a whole number/)
  })
})

const pgSuite = await describePg('unreferenced uploads on PostgreSQL')

pgSuite('unreferenced uploads on PostgreSQL', () => {
  it('the quota holds and the sweep removes the rows after the grace period', { timeout: 60_000 }, async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const url = new URL(PG_URL)
    url.searchParams.set('schema', schema)
    const store = await openStore({ file: url.toString() })
    cleanups.push(() => store.close())
    const { person, upload, advance } = await serverOn(store, { quotaBytes: 3 * 64 * 1024 })
    const alice = await person('Alice')
    const statuses: number[] = []
    for (let i = 1; i <= 5; i++) statuses.push((await upload(alice, image(i, 64 * 1024))).status)
    expect(statuses).toEqual([201, 201, 201, 429, 429])
    await advance(GRACE + 1, 0)
    expect((await upload(alice, image(9, 64 * 1024))).status).toBe(201)
  })
})
