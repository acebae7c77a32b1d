/** The server's webhook deliverer: where its endpoints are, which targets it may reach, started with the server. */
import type { Store } from '../store/store.js'
import { isLoopbackHost } from './security.js'
import type { HttpServerOptions } from './options.js'

/**
 * Start delivering the store's webhooks, unless they are off. Private and loopback targets are
 * allowed on a loopback-bound server (local use) and elsewhere only when asked (`allowPrivate`).
 */
export async function startWebhooks(store: Store, options: HttpServerOptions['webhooks'], host: string, publicUrl: () => string, log: (message: string) => void): Promise<import('../webhooks/index.js').WebhookService | undefined> {
  if (options === false) return undefined
  const location = options?.location ?? store.location
  if (/^postgres(ql)?:\/\//i.test(location) && options?.location === undefined) {
    log('webhooks: off (an embedding on PostgreSQL passes webhooks: { location: <the store URL> } to deliver them)')
    return undefined
  }
  const { openWebhookState, WebhookService } = await import('../webhooks/index.js')
  const service = new WebhookService(store, await openWebhookState(location), {
    policy: { allowPrivate: options?.allowPrivate ?? isLoopbackHost(host) },
    ...(options?.retryBaseMs !== undefined ? { retry: { baseMs: options.retryBaseMs } } : {}),
    publicUrl,
    log,
  })
  service.start()
  return service
}
