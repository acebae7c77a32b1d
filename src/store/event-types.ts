import type { StoreEvent } from './events.js'

/** Every kind of store event. Zod-free, so the browser overlay subscribes to the same list. */
export const STORE_EVENT_TYPES: readonly StoreEvent['type'][] = [
  'session.created',
  'annotation.created',
  'annotation.status_changed',
  'annotation.replied',
  'annotation.deleted',
  'annotation.archived',
]
