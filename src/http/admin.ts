/** The admin routes of the REST API: list, add and revoke people and agents. */
import { addAgent, addPerson } from '../auth/identities.js'
import { readJson } from './body.js'
import { defineRoute, reply, type Route } from './context.js'

const ADMIN = ['admin'] as const

export const adminRoutes: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/api/identities',
    access: { kind: 'caller', roles: ADMIN, what: 'list people and agents' },
    summary: 'Every person and agent the store knows, with their role and credentials',
    readAfterWrite: true,
    handler: (ctx) => reply(ctx, 200, { identities: ctx.app.store.identities.list() }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/people',
    access: { kind: 'caller', roles: ADMIN, what: 'add or revoke people and agents' },
    summary: 'Add a person ({ name, role?: "admin" }); answers their sign-in link',
    handler: async (ctx) => {
      const body = (await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes)) as { name?: unknown; role?: unknown } | undefined
      const name = typeof body?.name === 'string' ? body.name : ''
      const role = body?.role === 'admin' ? 'admin' : 'person'
      reply(ctx, 201, await addPerson(ctx.app.store, name, { role, publicUrl: ctx.app.publicUrl() }))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/agents',
    access: { kind: 'caller', roles: ADMIN, what: 'add or revoke people and agents' },
    summary: 'Add an agent ({ name }); answers its token, shown once',
    handler: async (ctx) => {
      const body = (await readJson(ctx.req, ctx.res, ctx.app.maxBodyBytes)) as { name?: unknown } | undefined
      reply(ctx, 201, await addAgent(ctx.app.store, typeof body?.name === 'string' ? body.name : ''))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/identities/:id/revoke',
    access: { kind: 'caller', roles: ADMIN, what: 'add or revoke people and agents' },
    summary: 'Revoke a person or an agent: their credentials stop working and what they have open closes',
    handler: async (ctx) => reply(ctx, 200, await ctx.app.store.identities.revoke(ctx.params.id!)),
  }),
]
