/** What a team server tells whom: malformed escapes are 400, /health names paths only to admins. */
import { describe, expect, it } from 'vitest'
import { addAgent, addPerson } from '../../../src/auth/identities.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { request, serve, bearer, codeOf } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'


const cleanups = useCleanups()

async function team() {
  const store = createMemoryStore()
  cleanups.push(() => store.close())
  const http = await serve(store, cleanups, { storeLocation: '/home/someone/project/.marginalia/store.json', sources: { root: '/home/someone/project' } })
  const signIn = async (name: string, role?: 'admin') => {
    const added = await addPerson(store, name, { publicUrl: http.url, ...(role ? { role } : {}) })
    const redeemed = await request(`${http.url}/auth/redeem`, { method: 'POST', body: { code: codeOf(added.link) } })
    expect(redeemed.status).toBe(200)
    return { id: added.identity.id, token: redeemed.json.token as string }
  }
  return { store, url: http.url, admin: await signIn('Ada', 'admin'), person: await signIn('Alice'), agent: await addAgent(store, 'ci-agent') }
}

describe('malformed escapes', () => {
  it('a malformed % escape in the revoke path is 400 naming the parameter, not 500', async () => {
    const { url, admin } = await team()
    const r = await request(`${url}/api/identities/%E0%A4%A/revoke`, { method: 'POST', headers: bearer(admin.token), body: {} })
    expect(r.status).toBe(400)
    expect(r.json.error.code).toBe('INVALID_PARAMS')
    expect(r.json.error.message).toContain('id')
  })

  it('a malformed % escape in an asset path is 400', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { staticDir: testDir(cleanups).dir })
    expect((await request(`${http.url}/overlay/%E0%A4%A.js`)).status).toBe(400)
  })
})

describe('/health in team mode', () => {
  it('names the store location and source root to an admin only', async () => {
    const { url, admin, person, agent } = await team()
    for (const headers of [{}, bearer(person.token), bearer(agent.token), bearer('mga_aaaaaaaaaaaaaaaaaaaa.' + 'a'.repeat(43))]) {
      const r = await request(`${url}/health`, { headers })
      expect(r.status).toBe(200)
      expect(r.json.signIn).toBe(true)
      expect(r.text).not.toContain('/home/someone')
      expect(r.json.sourceRoot).toBeUndefined()
      expect(r.json.store.location).toBeUndefined()
      expect(typeof r.json.store.id).toBe('string')
    }
    const r = await request(`${url}/health`, { headers: bearer(admin.token) })
    expect(r.json.store.location).toBe('/home/someone/project/.marginalia/store.json')
    expect(r.json.sourceRoot).toBe('/home/someone/project')
  })

  it('local use (no sign-in) answers as before, paths included', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups, { storeLocation: '/home/someone/project/.marginalia/store.json', sources: { root: '/home/someone/project' } })
    const r = await request(`${http.url}/health`)
    expect(r.json.store.location).toBe('/home/someone/project/.marginalia/store.json')
    expect(r.json.sourceRoot).toBe('/home/someone/project')
  })
})
