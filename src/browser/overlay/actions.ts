/**
 * What the person does in an annotation's thread (reply, reopen, delete, copy) and in the list
 * (open, discard or retry what waits in the outbox, copy all), done on the server or in the outbox,
 * redrawn, and said in the toolbar.
 */
import type { Api } from '../shared/api.js'
import type { Annotation } from '../shared/types.js'
import { allAsMarkdown, copyText, oneAsMarkdown } from './views/copy.js'
import type { Dock } from './views/dock.js'
import type { ListEvents } from './views/list-panel.js'
import type { Outbox, OutboxSender } from './sync/outbox.js'
import type { PageSync } from './sync/page-sync.js'
import type { Panels } from './panels.js'
import type { Pins } from './views/pins.js'
import type { Renderer } from './render.js'
import type { ThreadEvents } from './views/thread-panel.js'

/** What the actions act on (the overlay itself is passed: its parts are read when the person acts). */
export interface ActionParts {
  readonly api: Api
  readonly sync: PageSync
  readonly outbox: Outbox
  readonly sender: OutboxSender
  readonly dock: Dock
  readonly pins: Pins
  readonly panels: Panels
  readonly render: Renderer
  /** Where the fallback copy's scratch text box goes (the overlay's shadow root). */
  readonly shadow: ShadowRoot
}

async function copy(o: ActionParts, markdown: string, done: string): Promise<void> {
  const ok = await copyText(markdown, o.shadow)
  o.dock.say(ok ? done : "Can't write to the clipboard on this page: copy from the inbox instead.")
}

export function threadActions(o: ActionParts): ThreadEvents {
  /** A fresher copy from the server's answer to the person's action. */
  const update = (fresh: Annotation): void => {
    o.sync.offer(fresh)
    o.render.all()
  }
  return {
    reply: async (id, message, attachments) => update(await o.api.reply(id, message, attachments)),
    reopen: async (id, message) => {
      update(await o.api.reopen(id, message))
      o.dock.say(`#${o.sync.numberOf(id)} is pending again.`)
    },
    remove: async (id) => {
      const n = o.sync.numberOf(id)
      await o.api.remove(id)
      o.sync.forget(id)
      o.panels.closeThread()
      o.render.all()
      o.dock.say(`#${n} deleted.`)
    },
    close: () => o.panels.closeThread(),
    copy: (a) => {
      const n = o.sync.numberOf(a.id)
      void copy(o, oneAsMarkdown(a, n), `Copied #${n} as Markdown.`)
    },
    unreachable: () => o.sync.setReachable(false),
  }
}

export function listActions(o: ActionParts): ListEvents {
  return {
    open: (id) => o.panels.open(id),
    close: () => o.panels.toggleList(false),
    discard: (item) => {
      o.outbox.remove(item.id)
      o.render.pins()
      o.render.list()
      o.dock.renderAlert()
    },
    retry: () => o.sender.retrySoon(),
    onPage: (a) => o.pins.elementOf(a) !== null,
    copyAll: () => {
      const all = o.sync.ordered()
      void copy(o, allAsMarkdown(all), `Copied ${all.length} annotation${all.length === 1 ? '' : 's'} as Markdown.`)
    },
  }
}
