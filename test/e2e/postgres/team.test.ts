/**
 * The team inbox on PostgreSQL: the operator adds a person and an agent with the CLI while two
 * `marginalia serve` processes run on one schema; the sign-in link and the agent token work on
 * both servers (REST), every change says who made it, and `marginalia revoke` (another process)
 * makes the token fail on both and closes the agent's event stream within 1 s. Only hashes reach
 * the database.
 */
import { expect, it } from 'vitest'
import { request, SseClient } from '../../helpers/http.js'
import { runCli, startServeCli } from '../../helpers/cli.js'
import { bearer, codeOf } from '../../helpers/who-seed.js'
import { describePg, schemaStore, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const suite = await describePg('the team inbox on PostgreSQL')

suite('team inbox on PostgreSQL', () => {
  it('people add / agents add while two servers run; link and token work on both; revoke closes the stream within 1 s', { timeout: 90_000 }, async () => {
    const { schema, store: storeUrl, dir } = schemaStore(cleanups)
    const store = ['--store', storeUrl]
    const a = await startServeCli(cleanups, dir, store)
    const b = await startServeCli(cleanups, dir, store)
    const cli = (...args: string[]) => runCli([...args, ...store], dir)

    const person = await cli('people', 'add', 'Alice Martin', '--public-url', a.url)
    expect(person.code, person.stderr).toBe(0)
    const link = person.stdout.trim()
    expect(link.startsWith(`${a.url}/sign-in#code=mgc_`)).toBe(true)
    const agent = await cli('agents', 'add', 'ci-agent')
    expect(agent.code, agent.stderr).toBe(0)
    const token = agent.stdout.trim()

    // Both servers now ask for sign-in. Alice's link works once, on either server.
    for (const s of [a, b]) expect((await request(`${s.url}/api/annotations`)).status).toBe(401)
    const redeemed = await request(`${b.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(link) } })
    expect(redeemed.status, redeemed.text).toBe(200)
    expect((await request(`${a.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(link) } })).status).toBe(401)
    const alice = redeemed.json.token as string

    // Alice annotates through A; the agent answers through B; both carry their names.
    const session = await request(`${a.url}/api/sessions`, { method: 'POST', headers: bearer(alice), body: { url: 'http://localhost:5173/' } })
    expect(session.status).toBe(201)
    const created = await request(`${a.url}/api/sessions/${session.json.id}/annotations`, { method: 'POST', headers: bearer(alice), body: { comment: 'The logo is blurry' } })
    expect(created.status).toBe(201)
    expect(created.json.by).toMatchObject({ name: 'Alice Martin', kind: 'person' })
    const ack = await request(`${b.url}/api/annotations/${created.json.id}/acknowledge`, { method: 'POST', headers: bearer(token), body: { message: 'On it' } })
    expect(ack.status, ack.text).toBe(200)
    const seen = await request(`${a.url}/api/annotations/${created.json.id}`, { headers: bearer(alice) })
    expect(seen.json.replies[0]).toMatchObject({ author: 'agent', by: { name: 'ci-agent', kind: 'agent' } })
    // The inbox's filters work on this store too.
    const mine = await request(`${b.url}/api/annotations?by=${created.json.by.id}&agent=${seen.json.replies[0].by.id}`, { headers: bearer(alice) })
    expect(mine.json.annotations.map((x: { id: string }) => x.id)).toEqual([created.json.id])

    // Only hashes in the database.
    const stored = JSON.stringify(await sql(`SELECT * FROM "${schema}".events`))
    for (const secret of [token, codeOf(link), alice]) expect(stored).not.toContain(secret.split('.')[1]!)
    expect(stored).toContain('scrypt$')

    // Revoke from another process: the agent's stream on A closes within 1 s; its next request fails on both servers.
    const events = await SseClient.open(`${a.url}/api/events`, bearer(token))
    cleanups.push(() => events.close())
    expect(events.status).toBe(200)
    const ended = events.ended$(10_000).then(() => Date.now())
    const revoked = await cli('revoke', 'ci-agent')
    expect(revoked.code, revoked.stderr).toBe(0)
    const at = Date.parse(/ at (\S+)\n/.exec(revoked.stderr)![1]!)
    for (const s of [a, b]) expect((await request(`${s.url}/api/annotations`, { headers: bearer(token) })).status).toBe(401)
    expect((await ended) - at).toBeLessThan(1_000)
    expect((await request(`${b.url}/api/annotations`, { headers: bearer(alice) })).status).toBe(200)
  })
})
