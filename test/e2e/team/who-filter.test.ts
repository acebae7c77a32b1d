/** The team inbox, REST: the inbox's search filters on who wrote an annotation (`by`) and which agent replied (`agent`). */
import { describe, expect, it } from 'vitest'
import { createMemoryStore, type Annotation } from '../../../src/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve } from '../../helpers/http.js'
import { bearer, seedTeam } from '../../helpers/who-seed.js'

const cleanups = useCleanups()

async function setup() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const team = await seedTeam(store, http.url)
  // Bob (a person, not an admin) searches: every role may read and filter.
  const search = (query: string) => request(`${http.url}/api/annotations?${query}`, { headers: bearer(team.tokens.bob) })
  return { store, http, search, ...team }
}

const ids = (r: { json: { annotations: Annotation[] } }) => r.json.annotations.map((a) => a.id)

describe('REST: filter the search by who wrote and which agent replied', () => {
  it('by a person, by "you", by an agent, and both together; totals follow the filter', async () => {
    const { search, people, agents, annotations: { local, a1, b1, a2 }, sessionId } = await setup()
    const alice = await search(`by=${people.alice.identity.id}`)
    expect(alice.status).toBe(200)
    expect(ids(alice)).toEqual([a1.id, a2.id])
    expect(alice.json.totals).toEqual({ sessions: { [sessionId]: 2 }, statuses: { pending: 0, acknowledged: 1, resolved: 1, dismissed: 0 } })
    expect(ids(await search(`by=${people.bob.identity.id}`))).toEqual([b1.id])
    expect(ids(await search('by=you'))).toEqual([local.id])
    expect(ids(await search(`by=you,${people.bob.identity.id}`))).toEqual([local.id, b1.id])
    expect(ids(await search(`by=${people.admin.identity.id}`))).toEqual([]) // the admin wrote nothing

    expect(ids(await search(`agent=${agents.ci.identity.id}`))).toEqual([a1.id, b1.id]) // the acknowledge message counts as its reply
    expect(ids(await search(`agent=${agents.bot.identity.id}`))).toEqual([a2.id])
    expect(ids(await search(`by=${people.alice.identity.id}&agent=${agents.ci.identity.id}`))).toEqual([a1.id])
    // With the other filters: the status filter narrows the list, its totals still count every status.
    const open = await search(`agent=${agents.ci.identity.id},${agents.bot.identity.id}&status=pending,acknowledged&sort=newest`)
    expect(ids(open)).toEqual([b1.id, a1.id])
    expect(open.json.total).toBe(2)
    expect(open.json.totals.statuses).toEqual({ pending: 1, acknowledged: 1, resolved: 1, dismissed: 0 })
    expect(ids(await search(`by=${people.alice.identity.id}&q=footer`))).toEqual([a2.id])
  })

  it('pages with the same cursors as the store, newest first too', async () => {
    const { search, agents, annotations: { a1, b1 } } = await setup()
    const first = await search(`agent=${agents.ci.identity.id}&sort=newest&limit=1`)
    expect(ids(first)).toEqual([b1.id])
    expect(first.json.total).toBe(2)
    expect(first.json.nextCursor).toEqual(expect.any(String))
    const second = await search(`agent=${agents.ci.identity.id}&sort=newest&limit=1&cursor=${first.json.nextCursor}`)
    expect(ids(second)).toEqual([a1.id])
    expect(second.json.nextCursor).toBeUndefined()
  })

  it('refuses a bad value with 400 naming the parameter and what to send', async () => {
    const { search, people, agents } = await setup()
    const bad = async (query: string, mentions: string[]) => {
      const r = await search(query)
      expect(r.status).toBe(400)
      expect(r.json.error.code).toBe('INVALID_PARAMS')
      for (const m of mentions) expect(r.json.error.message).toContain(m)
    }
    await bad('by=alice%20martin', ['by', '"alice martin" is not an identity id', 'by=idn_'])
    await bad('agent=you', ['agent', '"you" is not an identity id', 'agent=idn_'])
    await bad(`agent=${people.alice.identity.id}`, ['agent', 'Alice Martin, a person', `by=${people.alice.identity.id}`])
    await bad(`by=${agents.ci.identity.id}`, ['by', 'the agent ci-agent', `agent=${agents.ci.identity.id}`])
    await bad('by=,', ['by', 'is empty'])
  })

  it('GET /api lists the parameters', async () => {
    const { http, tokens } = await setup()
    const r = await request(`${http.url}/api`, { headers: bearer(tokens.alice) })
    expect(r.json.routes).toContain('GET /api/annotations?status=&sessionId=&intent=&severity=&author=&by=&agent=&q=&sort=&limit=&cursor=')
  })
})
