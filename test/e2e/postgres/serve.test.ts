/**
 * Two `marginalia serve` processes (the built CLI) on one PostgreSQL schema: an SSE client on A
 * receives every event written through B, in rev order, promptly; /health names the store
 * without the password; REST writes on both sides interleave without a lost or duplicated rev.
 */
import { expect, it } from 'vitest'
import { request, SseClient } from '../../helpers/http.js'
import { startServeCli } from '../../helpers/cli.js'
import { tempDir } from '../../helpers/store.js'
import { PG_URL, describePg, dropSchema, freshSchema, sql } from '../../helpers/pg.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const suite = await describePg('two marginalia serve processes on PostgreSQL')

suite('two marginalia serve processes on one PostgreSQL schema', () => {
  it('SSE on A receives every event written through B, in order; /health shows the store without secrets', async () => {
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const t = tempDir()
    cleanups.push(t.cleanup)
    const url = new URL(PG_URL)
    url.password = 'not-needed-but-secret'
    url.searchParams.set('schema', schema)
    const a = await startServeCli(cleanups, t.dir, ['--store', url.toString()])
    const b = await startServeCli(cleanups, t.dir, [], { DATABASE_URL: url.toString() })
    const health = await request(`${a.url}/health`)
    expect(health.json).toMatchObject({ status: 'ok', store: { location: expect.stringContaining(`(schema ${schema})`) as unknown } })
    expect(JSON.stringify(health.json)).not.toContain('not-needed-but-secret')
    expect(a.stderr()).not.toContain('not-needed-but-secret')

    const events = await SseClient.open(`${a.url}/api/events`, { 'Last-Event-ID': '0' })
    cleanups.push(() => events.close())
    const session = await request(`${b.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    expect(session.status).toBe(201)
    const sessionId = (session.json as { id: string }).id
    await events.until((es) => es.some((e) => e.id === '1'))

    const latencies: number[] = []
    for (let i = 0; i < 20; i++) {
      const sent = Date.now()
      const r = await request(`${b.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `from B ${i}` } })
      expect(r.status).toBe(201)
      await events.until((es) => es.some((e) => e.id === String(i + 2)))
      latencies.push(Date.now() - sent)
    }
    // Writes through both servers at once: one sequence of revs, nothing lost.
    const both = await Promise.all(Array.from({ length: 20 }, (_, i) => request(`${(i % 2 ? a : b).url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `both ${i}` } })))
    expect(both.every((r) => r.status === 201)).toBe(true)
    await events.until((es) => es.some((e) => e.id === '41'))
    const ids = events.events.filter((e) => e.id !== undefined && /^\d+$/.test(e.id)).map((e) => Number(e.id))
    expect(ids).toEqual(Array.from({ length: 41 }, (_, i) => i + 1))
    const revs = await sql<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".events`)
    expect(Number(revs[0]!.n)).toBe(41)
    latencies.sort((x, y) => x - y)
    console.error(`POST on B → SSE on A: p50 ${latencies[10]} ms, max ${latencies[19]} ms (round trip incl. the POST)`)
    expect(latencies[10]).toBeLessThan(500)
  })
})

suite('an agent on one server, a person on another', () => {
  it('watch_annotations over MCP on A wakes for an annotation POSTed to B', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const schema = freshSchema()
    cleanups.push(() => dropSchema(schema))
    const t = tempDir()
    cleanups.push(t.cleanup)
    const store = `${PG_URL}?schema=${schema}`
    const a = await startServeCli(cleanups, t.dir, ['--store', store, '--burst-ms', '0'])
    const b = await startServeCli(cleanups, t.dir, ['--store', store])
    const client = new Client({ name: 'agent-on-a', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`)))
    cleanups.push(() => client.close())
    const session = await request(`${b.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })
    const sessionId = (session.json as { id: string }).id
    for (let i = 0; i < 3; i++) {
      const watching = client.callTool({ name: 'watch_annotations', arguments: { timeoutMs: 20_000 } })
      // Whether the POST lands before or after the watch starts waiting, the watch returns it.
      const posted = await request(`${b.url}/api/sessions/${sessionId}/annotations`, { method: 'POST', body: { comment: `from the person on B ${i}` } })
      expect(posted.status).toBe(201)
      const result = (await watching) as { structuredContent?: { status: string; annotations?: { id: string; comment: string }[] } }
      expect(result.structuredContent?.status).toBe('annotations')
      expect(result.structuredContent?.annotations?.map((x) => x.id)).toEqual([(posted.json as { id: string }).id])
      const ack = await client.callTool({ name: 'acknowledge', arguments: { id: (posted.json as { id: string }).id } })
      expect(ack.isError).toBeFalsy()
    }
    // B sees A's acknowledgements (read-after-write across servers).
    const list = await request(`${b.url}/api/sessions/${sessionId}`)
    expect((list.json as { annotations: { status: string }[] }).annotations.map((x) => x.status)).toEqual(['acknowledged', 'acknowledged', 'acknowledged'])
  }, 60_000)
})
