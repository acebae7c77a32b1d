/**
 * Contention on one PostgreSQL schema: `processes` mutator processes (test/fixtures/mutator.mjs,
 * each `count` concurrent annotation + reply pairs) plus a built `marginalia serve` taking REST
 * writes, all at once. Nothing is lost (final rev = start + successes), no rev repeats, and every
 * process's changes$ delivers every event exactly once, in rev order.
 */
import { expect } from 'vitest'
import { openStore } from '../../../../src/index.js'
import { request } from '../../../helpers/http.js'
import { startServeCli } from '../../../helpers/cli.js'
import { tempDir } from '../../../helpers/store.js'
import { PG_URL, dropSchema, freshSchema, sql } from '../../../helpers/pg.js'
import { type Cleanups } from '../../../helpers/cleanup.js'
import { startMutator } from '../../../helpers/mutator.js'

export async function contention(cleanups: Cleanups, processes: number, count: number, restWrites: number): Promise<{ rev: number; ms: number }> {
  const schema = freshSchema()
  cleanups.push(() => dropSchema(schema))
  const url = new URL(PG_URL)
  url.searchParams.set('schema', schema)
  const setup = await openStore({ url: url.toString() })
  const session = await setup.createSession({ url: 'http://x/' })
  await setup.close()
  const start = 1
  const expected = start + processes * count * 2 + restWrites

  const t = tempDir()
  cleanups.push(t.cleanup)
  const serve = await startServeCli(cleanups, t.dir, ['--store', url.toString()])

  const children = Array.from({ length: processes }, (_, i) => startMutator(cleanups, url.toString(), session.id, count, expected, `p${i}`))
  await Promise.all(children.map((c) => c.ready))
  const began = Date.now()
  for (const c of children) c.go()
  const rest = await Promise.all(
    Array.from({ length: restWrites }, (_, i) => request(`${serve.url}/api/sessions/${session.id}/annotations`, { method: 'POST', body: { comment: `rest ${i}` } })),
  )
  const reports = await Promise.all(children.map((c) => c.report))
  const ms = Date.now() - began
  expect(rest.filter((r) => r.status === 201)).toHaveLength(restWrites)

  const rows = await sql<{ rev: string }>(`SELECT rev FROM "${schema}".events ORDER BY rev`)
  const revs = rows.map((r) => Number(r.rev))
  expect(revs).toEqual(Array.from({ length: expected }, (_, i) => i + 1))
  for (const r of reports) {
    expect(r.rev).toBe(expected)
    expect(r.mine).toHaveLength(count)
    // Exactly once, in order: everything after the rev it opened at.
    expect(r.seen).toEqual(Array.from({ length: expected - r.openedAt }, (_, i) => r.openedAt + 1 + i))
  }
  const health = await request(`${serve.url}/health`)
  expect((health.json as { rev: number }).rev).toBe(expected)
  return { rev: expected, ms }
}
