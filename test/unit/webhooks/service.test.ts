import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../../src/index.js'
import { MemoryWebhookState } from '../../../src/webhooks/state.js'
import { WebhookService } from '../../../src/webhooks/service.js'
import { runCleanups, type Cleanups } from '../../helpers/cleanup.js'
import { eventually } from '../../helpers/eventually.js'
import { accepted, startReceiver } from '../../helpers/webhook-receiver.js'

const cleanups: Cleanups = []
afterEach(() => runCleanups(cleanups))

async function setUp(answer?: Parameters<typeof startReceiver>[0], retry: { baseMs?: number; disableAfterMs?: number } = {}) {
  const store = createMemoryStore()
  const receiver = await startReceiver(answer)
  const service = new WebhookService(store, new MemoryWebhookState(), { policy: { allowPrivate: true }, retry: { baseMs: 20, ...retry }, publicUrl: () => 'http://127.0.0.1:4848' })
  service.start()
  cleanups.push(() => receiver.close(), () => service.close(), () => store.close())
  return { store, receiver, service }
}

describe('the webhook deliverer', () => {
  it('sends every kind of change, signed, in order, with the record as REST returns it and no secret', async () => {
    const { store, receiver, service } = await setUp()
    const { endpoint, secret } = await service.add({ url: receiver.url, description: 'team chat' })
    receiver.secret = secret
    expect(endpoint).not.toHaveProperty('secret')
    expect(JSON.stringify(await service.list())).not.toContain(secret)

    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'Buy is grey' })
    await store.acknowledge(a.id, { message: 'on it' })
    await store.reply(a.id, { author: 'agent', message: 'Which grey?', kind: 'question' })
    await store.reply(a.id, { author: 'human', message: 'The light one' })
    await store.reply(a.id, { author: 'human', message: 'thanks' })
    await store.resolve(a.id, { summary: 'made it blue' })
    await store.reopen(a.id, { message: 'still grey' })
    await store.dismiss(a.id, { reason: 'by design' })
    await store.deleteAnnotation(a.id)

    const types = ['annotation.created', 'annotation.acknowledged', 'question.asked', 'question.answered', 'annotation.replied', 'annotation.resolved', 'annotation.reopened', 'annotation.dismissed', 'annotation.deleted']
    await eventually(() => receiver.deliveries.map((d) => d.body.type)).toEqual(types)
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true)
    expect(receiver.deliveries[0]!.body.data.annotation).toMatchObject({ id: a.id, comment: 'Buy is grey', sessionId: session.id })
    expect(receiver.deliveries[5]!.body.data).toMatchObject({ from: 'acknowledged', to: 'resolved', reply: { message: 'made it blue' } })
    expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(types.length)
    expect(receiver.deliveries.map((d) => JSON.stringify(d.body)).join('')).not.toContain('whsec_')
    await eventually(async () => (await service.attempts(endpoint.id)).length).toBe(types.length)
    const log = await service.attempts(endpoint.id)
    expect(log[0]).toMatchObject({ type: 'annotation.deleted', ok: true, status: 204, attempt: 1 })
    expect(log[0]!.latencyMs).toBeGreaterThanOrEqual(0)
  })

  it('sends only the types an endpoint asked for', async () => {
    const { store, receiver, service } = await setUp()
    const { secret } = await service.add({ url: receiver.url, events: ['annotation.resolved'] })
    receiver.secret = secret
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    await store.resolve(a.id, {})
    await eventually(() => receiver.deliveries.map((d) => d.body.type)).toEqual(['annotation.resolved'])
  })

  it('retries a failing receiver with the same webhook-id until it answers, keeping the order', async () => {
    const { store, receiver, service } = await setUp((n) => (n < 5 ? 500 : 200))
    const { endpoint, secret } = await service.add({ url: receiver.url })
    receiver.secret = secret
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    const a = await store.addAnnotation({ sessionId: session.id, comment: 'one' })
    const b = await store.addAnnotation({ sessionId: session.id, comment: 'two' })
    await eventually(() => accepted(receiver).unique.size).toBe(2)
    expect(receiver.deliveries.slice(0, 6).map((d) => d.id)).toEqual(Array(6).fill(receiver.deliveries[0]!.id))
    expect([...accepted(receiver).unique.values()].map((d) => (d.body.data.annotation as { id: string }).id)).toEqual([a.id, b.id])
    const log = await service.attempts(endpoint.id)
    expect(log.slice(-6).map((x) => x.attempt).reverse()).toEqual([1, 2, 3, 4, 5, 6])
    expect(log.at(-1)).toMatchObject({ ok: false, status: 500, error: 'answered 500' })
  })

  it('waits as long as Retry-After asks', async () => {
    const { store, receiver, service } = await setUp((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 200))
    receiver.secret = (await service.add({ url: receiver.url })).secret
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    await eventually(() => receiver.deliveries.length).toBe(2)
    expect(receiver.deliveries[1]!.receivedAt - receiver.deliveries[0]!.receivedAt).toBeGreaterThanOrEqual(950)
  })

  it('disables an endpoint that fails for the whole allowed time, says why, and resumes once enabled', async () => {
    let healthy = false
    const { store, receiver, service } = await setUp(() => (healthy ? 200 : 503), { disableAfterMs: 300 })
    const { endpoint, secret } = await service.add({ url: receiver.url })
    receiver.secret = secret
    const session = await store.createSession({ url: 'http://localhost:5173/' })
    await store.addAnnotation({ sessionId: session.id, comment: 'x' })
    await eventually(async () => (await service.list())[0]!.status).toBe('disabled')
    const [view] = await service.list()
    expect(view!.disabledReason).toMatch(/every delivery failed since .* \(last: answered 503\); enable it again/)
    healthy = true
    await service.enable(endpoint.id)
    await eventually(() => accepted(receiver).unique.size).toBe(1)
    await eventually(async () => (await service.list())[0]!.status).toBe('active')
  })

  it('refuses bad targets with an error naming the field and the fix', async () => {
    const { service } = await setUp()
    await expect(service.add({ url: 'http://169.254.169.254/latest/meta-data' })).rejects.toThrow(/^url: 169\.254\.169\.254 is a link-local, metadata/)
    await expect(service.add({ url: 'gopher://example.com' })).rejects.toThrow(/^url: only http and https/)
    await expect(service.add({ url: 'https://example.com/', events: ['annotation.sneezed'] })).rejects.toThrow(/^events: unknown type annotation\.sneezed; choose from annotation\.created/)
    expect(await service.list()).toEqual([])
  })

  it('sends a signed test message on demand and logs it', async () => {
    const { receiver, service } = await setUp()
    const { endpoint, secret } = await service.add({ url: receiver.url })
    receiver.secret = secret
    const attempt = await service.test(endpoint.id)
    expect(attempt).toMatchObject({ ok: true, status: 204, type: 'webhook.test' })
    expect(receiver.deliveries[0]).toMatchObject({ verified: true, body: { type: 'webhook.test' } })
  })
})
