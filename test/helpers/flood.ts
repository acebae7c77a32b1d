/**
 * A flood of bogus well-formed agent tokens against a team server on a file store, while a
 * signed-in person reads an attachment and writes annotations: the statuses the flood got and the
 * person's slowest round trip before and during it. For test/e2e/security/fair-shares.test.ts and its
 * heavy variant in stress/.
 */
import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { addPerson } from '../../src/auth/identities.js'
import { openStore } from '../../src/store/index.js'
import type { Cleanups } from './cleanup.js'
import { request, serve } from './http.js'
import { tempDir } from './store.js'
import { solidPng } from './png.js'

export interface FloodFigures {
  requests: number
  unauthorized: number
  limited: number
  /** Every 429 carried a Retry-After of at least 1 s. */
  retryAfterEverywhere: boolean
  /** The person's slowest read + write round trip before the flood and during it (ms). */
  baselineMs: number
  duringMs: number
}

export async function runAuthFlood(cleanups: Cleanups, options: { requests: number; inFlight: number; rounds: number }): Promise<FloodFigures> {
  const t = tempDir('marginalia-flood-')
  cleanups.push(t.cleanup)
  const store = await openStore({ file: t.file, pollIntervalMs: 0, watchFiles: false })
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { team: { ratePerSecond: 0 } })
  const added = await addPerson(store, 'Alice', { publicUrl: http.url })
  const code = decodeURIComponent(new URL(added.link).hash.replace(/^#code=/, ''))
  const person = (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code } })).json.token as string
  const auth = { Authorization: `Bearer ${person}` }
  const upload = await request(`${http.url}/api/attachments`, { method: 'POST', headers: { ...auth, 'Content-Type': 'image/png' }, body: solidPng(40, 30, [10, 120, 200]) })
  expect(upload.status).toBe(201)
  const session = await request(`${http.url}/api/sessions`, { method: 'POST', headers: auth, body: { url: 'http://app.test/' } })
  expect(session.status).toBe(201)

  /** The person's work: attachment reads and annotation writes, each round timed; the slowest. */
  const work = async (): Promise<number> => {
    let slowest = 0
    for (let i = 0; i < options.rounds; i++) {
      const t0 = performance.now()
      const read = await request(`${http.url}${upload.json.url}`, { timeoutMs: 60_000 })
      expect(read.status).toBe(200)
      const write = await request(`${http.url}/api/sessions/${session.json.id}/annotations`, { method: 'POST', headers: auth, body: { comment: `note ${i}` }, timeoutMs: 60_000 })
      expect(write.status).toBe(201)
      slowest = Math.max(slowest, performance.now() - t0)
    }
    return slowest
  }
  const baselineMs = await work()

  const statuses: number[] = []
  let retryAfterEverywhere = true
  let next = 0
  const flood = async (): Promise<void> => {
    while (next < options.requests) {
      next++
      const bogus = `mga_${randomBytes(10).toString('hex')}.${randomBytes(32).toString('base64url')}`
      const r = await request(`${http.url}/api/annotations`, { headers: { Authorization: `Bearer ${bogus}` }, timeoutMs: 60_000 })
      statuses.push(r.status)
      if (r.status === 429 && !(Number(r.headers['retry-after']) >= 1)) retryAfterEverywhere = false
    }
  }
  const flooding = Promise.all(Array.from({ length: options.inFlight }, flood))
  const duringMs = await work()
  await flooding
  return {
    requests: statuses.length,
    unauthorized: statuses.filter((s) => s === 401).length,
    limited: statuses.filter((s) => s === 429).length,
    retryAfterEverywhere,
    baselineMs,
    duringMs,
  }
}
