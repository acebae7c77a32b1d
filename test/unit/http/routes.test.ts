/** The route table: one declaration per route, from which the router, the role checks, GET /api and the reference are derived. */
import { describe, expect, it } from 'vitest'
import { apiListing, describeRoutes } from '../../../src/http/routes.js'
import { createMemoryStore } from '../../../src/store/index.js'
import { request, serve } from '../../helpers/http.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

describe('the route table', () => {
  it('describes every route without a server or a store: method, path, access, summary, input as JSON Schema', () => {
    const routes = describeRoutes()
    const keys = routes.map((r) => `${r.method} ${r.path}`)
    expect(new Set(keys).size).toBe(keys.length)
    for (const r of routes) expect(r.summary.length, `${r.method} ${r.path}`).toBeGreaterThan(10)
    for (const key of ['GET /health', 'POST /auth/redeem', 'GET /sign-in', '* /mcp', 'GET /api', 'POST /api/sessions', 'GET /api/attachments/:sha256', 'POST /api/identities/:id/revoke', 'GET /favicon.ico', 'GET /', '* /api/*', '* /*']) {
      expect(keys).toContain(key)
    }
    expect(routes.find((r) => r.path === '/api/events')?.aliases).toEqual(['/events'])
    expect(routes.find((r) => r.path === '/mcp')).toMatchObject({ access: 'caller', roles: ['agent'] })
    expect(routes.find((r) => r.path === '/api/attachments/:sha256')?.access).toBe('capability')
    const list = routes.find((r) => r.method === 'GET' && r.path === '/api/annotations')
    expect(list?.input?.query).toMatchObject({ type: 'object', properties: { status: { type: 'string' }, q: { type: 'string', maxLength: 200 } } })
    const create = routes.find((r) => r.method === 'POST' && r.path === '/api/sessions/:id/annotations')
    expect(create?.input?.body).toMatchObject({ type: 'object', properties: { comment: { type: 'string' } } })
    expect(JSON.parse(JSON.stringify(routes))).toEqual(routes) // plain data: a docs generator can write it out
  })

  it('every write under /api names the roles it needs (no write is open to every caller by omission)', () => {
    const writes = describeRoutes().filter((r) => r.path.startsWith('/api/') && !r.path.endsWith('/*') && r.method !== 'GET')
    expect(writes.length).toBeGreaterThan(10)
    for (const r of writes) expect(r.roles, `${r.method} ${r.path}`).toBeDefined()
  })

  it('GET /api answers the listing derived from the table: every route under /api, with its query parameters and aliases', async () => {
    const store = createMemoryStore()
    cleanups.push(() => store.close())
    const http = await serve(store, cleanups)
    const index = await request(`${http.url}/api`)
    expect(index.status).toBe(200)
    expect(index.json).toEqual(apiListing())
    expect(index.json.routes).toContain('GET /api/sessions/:id?status=&limit=&cursor=')
    expect(index.json.routes).toContain('POST /api/identities/:id/revoke')
    expect(index.json.aliases).toEqual({ '/sessions/:id/events': '/api/sessions/:id/events', '/questions': '/api/questions', '/events': '/api/events' })
    const paths = describeRoutes().filter((r) => r.path.startsWith('/api/') && !r.path.endsWith('/*')).length
    expect(index.json.routes).toHaveLength(paths)
  })
})
