/**
 * The chunk of the agent's permission prompts on the annotated page (shared/permissions.ts draws
 * them), fetched when the page has a request to show, which most pages never have
 * (../permission-watch.ts), following the permission events on the page's own stream: a host element of its own beside the overlay's, with its own shadow
 * root and adopted styles, so the page's CSS and the overlay's layout leave each other alone.
 */
import type { Api } from '../../shared/api.js'
import type { PermissionFeed } from '../../shared/permission-feed.js'
import { PERMISSION_CSS, PermissionPrompts } from '../../shared/permissions.js'
import { adoptStyles } from '../page/csp.js'

export interface MountedPrompts {
  readonly prompts: PermissionPrompts
  stop(): void
}

export function mountPermissionPrompts(api: Api, feed: PermissionFeed): MountedPrompts {
  const host = document.createElement('div')
  // The overlay's picker and outside-click handling skip everything marked as Marginalia's.
  host.setAttribute('data-marginalia', '')
  host.setAttribute('data-marginalia-permissions', '')
  const shadow = host.attachShadow({ mode: 'open' })
  adoptStyles(shadow, PERMISSION_CSS)
  const root = document.createElement('div')
  shadow.append(root)
  document.documentElement.appendChild(host)
  const prompts = new PermissionPrompts(api, root)
  void prompts.start(feed)
  return {
    prompts,
    stop() {
      prompts.stop()
      host.remove()
    },
  }
}
