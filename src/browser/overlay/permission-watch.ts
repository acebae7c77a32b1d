/**
 * Watches for the agent's permission requests without the prompts' code: the requests as listed
 * (`GET /api/permissions`), then their event stream from that rev. The prompts (the `prompts`
 * chunk) are fetched and mounted when a request is waiting for an answer or a new one arrives;
 * they load the list again themselves and follow it from then on. Nothing is shown to a person
 * without access (the list answers an error) or without a server.
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
  let stream: LiveStream | undefined
  let mounted: MountedPrompts | undefined
  let mounting = false
  const mount = (): void => {
    if (mounting || stopped) return
    mounting = true
    loadPrompts().then(
      (chunk) => {
        if (stopped) return
        stream?.close()
        mounted = chunk.mountPermissionPrompts(api)
      },
      // Asked for again at the next request.
      () => void (mounting = false),
    )
  }
  void (async () => {
    let listed: { rev: number; permissions: { answer?: unknown }[] }
    try {
      const response = await api.transport(`${api.base}/api/permissions`, { headers: api.authHeaders(), credentials: 'omit' })
      if (!response.ok) return
      listed = (await response.json()) as typeof listed
    } catch {
      return
    }
    if (stopped) return
    if (listed.permissions.some((p) => p.answer === undefined)) return mount()
    stream = new LiveStream(`${api.base}/api/permissions/events`, listed.rev, {
      event: (e) => {
        if (e.type === 'permission.requested') mount()
      },
      reset: () => {},
      presence: () => {},
      open: () => {},
      down: () => {},
    }, { headers: () => api.authHeaders(), transport: api.transport })
  })()
  return {
    stop() {
      stopped = true
      stream?.close()
      mounted?.stop()
    },
  }
}
