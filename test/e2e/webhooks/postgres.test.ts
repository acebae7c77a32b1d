/**
 * Two servers on one PostgreSQL store deliver one endpoint's stream between them: each change
 * once (a lease per endpoint: one server at a time, the other takes over when it dies), whichever
 * server the change was written through, with duplicates under 10 %.
 */
import { afterEach, expect, it } from 'vitest'
import { runCleanups, type Cleanups } from '../../helpers/cleanup.js'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { eventually, until } from '../../helpers/eventually.js'
import { accepted, startReceiver } from '../../helpers/webhook-receiver.js'
import { describePg, schemaStore } from '../../helpers/pg.js'
import { annotate, post } from './lib.js'

const cleanups: Cleanups = []
afterEach(() => runCleanups(cleanups))

const describe = await describePg('webhooks on PostgreSQL')

describe('webhooks on PostgreSQL', () => {
  it('two servers deliver one stream between them, through a kill -9 of one', { timeout: 180_000 }, async () => {
    const { store, dir } = schemaStore(cleanups)
    const receiver = await startReceiver()
    cleanups.push(() => receiver.close())
    const a = await startServeCli(cleanups, dir, ['--store', store, '--webhooks-retry', '50'])
    const b = await startServeCli(cleanups, dir, ['--store', store, '--webhooks-retry', '50'])
    const session = await post<{ id: string }>(a.url, '/api/sessions', { url: 'http://localhost:5173/' })
    const added = await runCli(['webhooks', 'add', receiver.url, '--store', store], dir)
    expect(added.code, added.stderr).toBe(0)
    receiver.secret = added.stdout.trim()

    const ids = [...(await Promise.all([annotate(a.url, session.id, 'through a', 15), annotate(b.url, session.id, 'through b', 15)])).flat()]
    await until(() => accepted(receiver).unique.size >= 10, 'deliveries under way', 60_000)
    a.child.kill('SIGKILL')
    ids.push(...(await annotate(b.url, session.id, 'after a died', 10)))

    await eventually(() => accepted(receiver).unique.size, 90_000).toBe(ids.length)
    const { unique, duplicates } = accepted(receiver)
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true)
    expect(duplicates).toBeLessThanOrEqual(ids.length * 0.1)
    expect(new Set([...unique.values()].map((d) => (d.body.data.annotation as { id: string }).id))).toEqual(new Set(ids))
  })
})
