/** Signed webhooks (Standard Webhooks): endpoints beside the store, delivered from its event log. */
import { FileWebhookState } from './file-state.js'
import { MemoryWebhookState, type WebhookState } from './state.js'

export { WebhookService, addEndpoint, testEndpoint, viewOf, WebhookInputError, WebhookNotFoundError } from './service.js'
export { WebhookTargetError } from './targets.js'
export { WEBHOOK_EVENT_TYPES } from './payload.js'

/**
 * Where a store's webhook endpoints live: `location` is the store as given (a file path, a
 * `postgres://` URL with its password, or `memory`). PostgreSQL's module is loaded only for one.
 */
export async function openWebhookState(location: string): Promise<WebhookState> {
  if (/^postgres(ql)?:\/\//i.test(location)) {
    const { PostgresWebhookState } = await import('./postgres-state.js')
    return new PostgresWebhookState(location)
  }
  if (location === 'memory') return new MemoryWebhookState()
  return new FileWebhookState(location.startsWith('file:') ? new URL(location).pathname : location)
}
