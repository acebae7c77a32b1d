/** The order every request passes with sign-in on: who calls (401) before the role (403) before 404 / 405, as the route table declares. */
import { describe, expect, it } from 'vitest'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { request, serve, bearer, codeOf } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'


const cleanups = useCleanups()

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups)
  const alice = await addPerson(store, 'Alice', { publicUrl: http.url })
  const person = (await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(alice.link) } })).json.token as string
  const agent = (await addAgent(store, 'ci-agent')).token
  return { url: http.url, person, agent }
}

describe('route order with sign-in on', () => {
  it('a wrong method or an unknown path under /api: 401 without a token, then the role, then 405 / 404', async () => {
    const { url, person, agent } = await team()
    expect((await request(`${url}/api/sessions`, { method: 'PUT', body: {} })).status).toBe(401)
    expect((await request(`${url}/api/nothing-here`)).status).toBe(401)
    // A write the path's POST route allows a person: an agent is refused for that reason, a person learns the methods.
    const agentPut = await request(`${url}/api/sessions`, { method: 'PUT', headers: bearer(agent), body: {} })
    expect(agentPut.status).toBe(403)
    expect(agentPut.json.error.message).toContain('may not create annotations')
    const personPut = await request(`${url}/api/sessions`, { method: 'PUT', headers: bearer(person), body: {} })
    expect(personPut.status).toBe(405)
    expect(personPut.headers.allow).toBe('GET, POST')
    // Any other write under /api needs an admin; reading an unknown path is 404.
    const write = await request(`${url}/api/nothing-here`, { method: 'POST', headers: bearer(person), body: {} })
    expect(write.status).toBe(403)
    expect(write.json.error.details).toMatchObject({ needs: ['admin'] })
    expect((await request(`${url}/api/nothing-here`, { headers: bearer(person) })).status).toBe(404)
    // The short aliases are the /api routes, checks included.
    expect((await request(`${url}/events`, { method: 'POST', headers: bearer(person), body: {} })).status).toBe(403)
    expect((await request(`${url}/questions`, { headers: bearer(person) })).status).toBe(200)
    expect((await request(`${url}/questions`)).status).toBe(401)
  })

  it('public routes ask nobody; an attachment URL is its own capability; sign-in routes answer 405 with Allow', async () => {
    const { url } = await team()
    expect((await request(`${url}/health`)).status).toBe(200)
    expect((await request(`${url}/sign-in`)).status).toBe(200)
    expect((await request(`${url}/api/attachments/${'a'.repeat(64)}`)).status).toBe(404)
    expect((await request(`${url}/api/attachments/not-a-sha`)).status).toBe(401)
    const redeem = await request(`${url}/auth/redeem`)
    expect(redeem.status).toBe(405)
    expect(redeem.headers.allow).toBe('POST')
    expect((await request(`${url}/auth/me`)).status).toBe(401)
    expect((await request(`${url}/nothing-here`, { method: 'POST', body: {} })).headers.allow).toBe('GET')
  })
})
