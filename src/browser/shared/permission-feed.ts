/**
 * The agents' permission events as heard on a stream the page already has open — the overlay's
 * page stream, asked for with `?permissions=1`, which replays them with the rest after a
 * reconnect — so the prompts need no connection of their own:
 * a browser keeps at most six connections to one server (HTTP/1.1), and every tab of the app
 * holds its live connections to the same server.
 */
import type { StoreEvent } from './types.js'

export interface PermissionListener {
  /** A `permission.requested` or `permission.answered` event. */
  event(e: StoreEvent): void
  /** Requests wait for an answer now: the server says so at every (re)connect when any do. */
  waiting(): void
  /** The stream could not resume from its rev (a `reset`): what was missed is not replayed, reload what is needed. */
  reset(): void
}

export interface PermissionFeed {
  /** Follow the permission events; returns what stops it. */
  follow(listener: PermissionListener): () => void
}

export const isPermissionEvent = (e: StoreEvent): boolean => e.type === 'permission.requested' || e.type === 'permission.answered'
