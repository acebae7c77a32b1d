/**
 * Watches for the agent's permission requests without the prompts' code and without a connection
 * of its own: it follows the permission events the page's stream carries (the page sync's
 * `permissionFeed`: a `permission.open` at every connect when requests wait, `permission.requested`
 * when one comes). The prompts (the `prompts` chunk) are fetched and mounted when a request is
 * waiting for an answer or a new one arrives; they load the list themselves and follow the same
 * feed from then on. Nothing is shown to a person without access or without a server.
 */
import type { Api } from '../shared/api.js'
import type { PermissionFeed } from '../shared/permission-feed.js'
import type { MountedPrompts } from './chunks/prompts.js'
import type { Chunks } from './chunks/table.js'

export interface PromptsWatch {
  stop(): void
}

export function watchPermissionPrompts(api: Api, feed: PermissionFeed, loadPrompts: () => Promise<Chunks['prompts']>): PromptsWatch {
  let stopped = false
  let mounted: MountedPrompts | undefined
  let mounting = false
  const mount = (): void => {
    if (mounting || stopped) return
    mounting = true
    loadPrompts().then(
      (chunk) => {
        if (stopped) return
        unfollow()
        mounted = chunk.mountPermissionPrompts(api, feed)
      },
      // Asked for again at the next request.
      () => void (mounting = false),
    )
  }
  const unfollow = feed.follow({
    event: (e) => {
      if (e.type === 'permission.requested') mount()
    },
    waiting: mount,
    reset: () => {},
  })
  return {
    stop() {
      stopped = true
      unfollow()
      mounted?.stop()
    },
  }
}
