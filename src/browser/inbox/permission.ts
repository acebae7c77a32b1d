/**
 * The agent's permission prompts in the inbox (shared/permissions.ts draws them), in a corner of
 * the page above the list, with the inbox's own `Api` (the signed-in person's session), following
 * the permission events on the inbox's own stream (`feed`): one connection a tab.
 */
import type { Api } from '../shared/api.js'
import type { PermissionFeed } from '../shared/permission-feed.js'
import { PERMISSION_CSS, PermissionPrompts } from '../shared/permissions.js'

export function mountInboxPermissions(api: Api, feed: PermissionFeed): PermissionPrompts {
  const style = document.createElement('style')
  style.textContent = PERMISSION_CSS
  document.head.append(style)
  const root = document.createElement('div')
  root.setAttribute('data-inbox-permissions', '')
  document.body.append(root)
  const prompts = new PermissionPrompts(api, root)
  void prompts.start(feed)
  return prompts
}
