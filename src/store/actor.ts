/**
 * Who is acting, for the commands a request runs. The HTTP server runs each
 * authenticated request inside `runAs(actor, …)`; every store command submitted from within it
 * (REST routes, MCP tool handlers) records that actor on its events and new records, without
 * every layer in between passing it along. An explicit `{ by }` on a command wins.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Actor } from './model.js'

const current = new AsyncLocalStorage<Actor | undefined>()

/** Run `fn` with `actor` as the one acting (undefined: nobody known, the local default). */
export function runAs<T>(actor: Actor | undefined, fn: () => T): T {
  return current.run(actor, fn)
}

/** The actor of the surrounding `runAs`, if any. */
export function currentActor(): Actor | undefined {
  return current.getStore()
}
