/**
 * Watches for the agent's permission requests without the prompts' code: the permission stream
 * asked for what waits now and then live events (`GET /api/permissions/events?open=1`: a
 * `permission.open` event when requests wait, `permission.requested` when one comes). The prompts
 * (the `prompts` chunk) are fetched and mounted when a request is waiting for an answer or a new
 * one arrives; they load the list themselves and follow it from then on. Nothing is shown to a
 * person without access (the stream is refused, and not asked for again) or without a server.
 */
import type { Api } from '../shared/api.js'
import { LiveStream } from '../shared/live.js'
import type { MountedPrompts } from './chunks/prompts.js'
import type { Chunks } from './chunks/table.js'

export interface PromptsWatch {
  stop(): void
}

export function watchPermissionPrompts(api: Api, loadPrompts: () => Promise<Chunks['prompts']>): PromptsWatch {
  let stopped = false
  let mounted: MountedPrompts | undefined
  let mounting = false
  const mount = (): void => {
    if (mounting || stopped) return
    mounting = true
    loadPrompts().then(
      (chunk) => {
        if (stopped) return
        stream.close()
        mounted = chunk.mountPermissionPrompts(api)
      },
      // Asked for again at the next request.
      () => void (mounting = false),
    )
  }
  // With `open=1` the server starts each connection from what waits now: no rev to resume from.
  const stream = new LiveStream(`${api.base}/api/permissions/events?open=1`, 0, {
    event: (e) => {
      if (e.type === 'permission.requested') mount()
    },
    other: (type) => {
      if (type === 'permission.open') mount()
    },
    refused: () => {},
    reset: () => {},
    presence: () => {},
    open: () => {},
    down: () => {},
  }, { headers: () => api.authHeaders(), transport: api.transport })
  return {
    stop() {
      stopped = true
      stream.close()
      mounted?.stop()
    },
  }
}
