/** The full PostgreSQL contention run: 4 processes × 500 concurrent mutation pairs + a serve taking 200 REST writes. */
import { afterEach, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import path from 'node:path'
import { openStore } from '../src/index.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../test/helpers/pg.js'
import { contention } from '../test/e2e/postgres/lib/contention.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const suite = await describePg('PostgreSQL contention (stress)')

suite('PostgreSQL contention (stress)', () => {
  it('4 processes × 500 mutation pairs + 200 REST writes on one schema', async () => {
    const { rev, ms } = await contention(cleanups, 4, 500, 200)
    console.error(`postgres contention: ${rev} events in ${ms} ms (${Math.round((rev * 1000) / ms)} events/s)`)
  })

  it('a writer process killed (SIGKILL) at a random moment of a write load × 50: no partial event, no gap, every confirmed write kept', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const store = await openStore({ url: PG_URL, schema })
    cleanups.push(() => store.close())
    const session = await store.createSession({ url: 'http://x/' })
    // A real store in a child process, writing 8 at a time and printing each confirmed id.
    const script = `
      import { openStore } from ${JSON.stringify(path.resolve(import.meta.dirname, '../dist/index.js'))}
      const store = await openStore({ url: process.argv[1], schema: process.argv[2], onError: () => {} })
      process.stdout.write('ready\\n')
      for (let i = 0; ; i++) {
        await Promise.all(Array.from({ length: 8 }, (_, j) => store.addAnnotation({ sessionId: process.argv[3], comment: 'w' + i + '-' + j }).then((a) => process.stdout.write(a.id + '\\n'))))
      }`
    const seed0 = Number(process.env.PG_KILL_SEED ?? Date.now() % 2 ** 31)
    let seed = seed0
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const confirmed: string[] = []
    for (let round = 0; round < 50; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, PG_URL, schema, session.id], { stdio: ['ignore', 'pipe', 'inherit'] })
      cleanups.push(() => child.kill('SIGKILL'))
      const lines = createInterface({ input: child.stdout })
      const ready = new Promise<void>((r) => lines.once('line', () => r()))
      lines.on('line', (l) => l.startsWith('ann_') && confirmed.push(l))
      await ready
      await new Promise((r) => setTimeout(r, 20 + Math.floor(rnd() * 200)))
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))
      // The killed writer's open transaction is rolled back; the next write here gets the next rev at once.
      const t = performance.now()
      await store.addAnnotation({ sessionId: session.id, comment: `after kill ${round}` })
      expect(performance.now() - t).toBeLessThan(2_000)
    }
    const rows = await sql<{ rev: string; event: { type: string; annotationId?: string } }>(`SELECT rev, event FROM "${schema}".events ORDER BY rev`)
    expect(rows.map((r) => Number(r.rev))).toEqual(rows.map((_, i) => i + 1))
    const kept = new Set(rows.map((r) => r.event.annotationId))
    for (const id of confirmed) expect(kept.has(id)).toBe(true)
    console.error(`postgres kill ×50: ${rows.length} events, ${confirmed.length} confirmed by the killed writers, all kept, no gap (seed ${seed0})`)
  }, 600_000)
})
