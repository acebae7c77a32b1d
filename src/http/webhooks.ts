/** The admin routes of signed webhooks: list, add, remove, enable and test endpoints, read their delivery log. */
import { z } from 'zod'
import { WEBHOOK_EVENT_TYPES, WebhookInputError, WebhookNotFoundError, WebhookTargetError, type WebhookService } from '../webhooks/index.js'
import { defineRoute, reply, type RequestContext, type Route } from './context.js'
import { HttpError } from './respond.js'

const ADMIN = { kind: 'caller', roles: ['admin'], what: 'manage webhooks' } as const

const NewEndpointBody = z.object({
  url: z.string().max(4096).describe('The http(s) URL the messages are POSTed to'),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length).optional().describe('The types it receives (default: every type)'),
  description: z.string().max(200).optional().describe('What it is for, for the list'),
})

function service(ctx: RequestContext): WebhookService {
  if (!ctx.app.webhooks) throw new HttpError(404, 'NOT_FOUND', 'Webhooks are off on this server (it was started with webhooks: false).')
  return ctx.app.webhooks
}

/** The webhooks' own errors as HTTP answers: 400 naming the field, 404. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (e) {
    if (e instanceof WebhookTargetError || e instanceof WebhookInputError) throw new HttpError(400, 'INVALID_PARAMS', e.message, { field: e.field })
    if (e instanceof WebhookNotFoundError) throw new HttpError(404, 'NOT_FOUND', e.message)
    throw e
  }
}

export const webhookRoutes: readonly Route[] = [
  defineRoute({
    method: 'GET',
    path: '/api/webhooks',
    access: ADMIN,
    summary: 'The webhook endpoints (never their secrets): URL, event types, status, cursor; disabled ones with the reason',
    handler: async (ctx) => reply(ctx, 200, { endpoints: await service(ctx).list(), eventTypes: WEBHOOK_EVENT_TYPES }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/webhooks',
    access: ADMIN,
    summary: 'Add a webhook endpoint ({ url, events?, description? }); answers it with its signing secret, shown this once',
    input: { body: NewEndpointBody },
    handler: async (ctx, input) => {
      const body = await input.body()
      reply(ctx, 201, await answering(() => service(ctx).add(body)))
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/webhooks/:id',
    access: ADMIN,
    summary: 'Remove a webhook endpoint and its delivery log',
    handler: async (ctx) => {
      await answering(() => service(ctx).remove(ctx.params.id!))
      reply(ctx, 200, { removed: ctx.params.id })
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/webhooks/:id/enable',
    access: ADMIN,
    summary: 'Enable a disabled webhook endpoint again: delivery resumes where it stopped',
    handler: async (ctx) => reply(ctx, 200, { endpoint: await answering(() => service(ctx).enable(ctx.params.id!)) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/webhooks/:id/test',
    access: ADMIN,
    summary: 'Send a signed webhook.test message to an endpoint now; answers the attempt (status, latency, error)',
    handler: async (ctx) => reply(ctx, 200, { attempt: await answering(() => service(ctx).test(ctx.params.id!)) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/webhooks/:id/attempts',
    access: ADMIN,
    summary: "An endpoint's delivery log: its last 50 attempts, newest first (type, status, latency, error)",
    handler: async (ctx) => reply(ctx, 200, { attempts: await answering(() => service(ctx).attempts(ctx.params.id!)) }),
  }),
]
