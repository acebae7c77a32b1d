/**
 * What the person sends, from Send to "Sent as #n": the screenshot, pasted images and page log
 * gathered (the screenshot within its budget), the annotation kept in the outbox before anything
 * goes over the network (nothing the person wrote can be lost), and what the toast says once the
 * server has it, refused it, or could not be reached (the outbox's sender reports to it).
 */
import type { Api } from '../shared/api.js'
import { agentState, squash } from '../shared/format.js'
import type { NewAnnotation } from '../shared/types.js'
import type { Extras } from './capture/attach.js'
import { complete } from './chunks/load.js'
import type { PageLogHandle } from '../early/page-log.js'
import type { UiParts } from './ui-parts.js'
import type { Dock } from './views/dock.js'
import { outboxItem, type Outbox, type SenderEvents } from './sync/outbox.js'
import type { PageSync } from './sync/page-sync.js'
import type { Target } from './annotate/picker.js'
import type { Renderer } from './render.js'

/** What sending needs of the overlay (the overlay itself is passed). */
export interface SendingParts {
  readonly api: Api
  readonly outbox: Outbox
  readonly sync: PageSync
  readonly dock: Dock
  /** The comment box's chunk (what is sent came from it). */
  readonly ui: UiParts | undefined
  /** The overlay's host: left out of the screenshot. */
  readonly host: Element
  /** How long the screenshot may take (the script tag's data-screenshot-budget). */
  readonly options: { screenshotBudgetMs?: number | undefined; capture?: Extras['capture'] }
  /** The page log now (it can be turned on after load). */
  readonly pageLog: PageLogHandle | undefined
  /** Send what waits in the outbox. */
  flush(): Promise<void>
  readonly render: Renderer
}

/** `sent`: the server has it, the pin gets its number and the toast says so. */
export interface Sending extends SenderEvents {
  /** Screenshot, pasted images, page log, styles: gathered (≤ the budget for the screenshot), then queued. */
  send(body: NewAnnotation, extras: { target: Target; screenshot: boolean; pageLog: boolean; images: File[] }): void
}

export function sending(o: SendingParts): Sending {
  const { sync, dock } = o
  /** What to say with "Sent as #n" for an outbox item (a screenshot the page's policy blocked). */
  const notes = new Map<string, string>()

  /** Into the outbox first: from here on, nothing the person wrote can be lost. */
  const queue = (body: NewAnnotation, note?: string): void => {
    const item = outboxItem(sync.pageKey, body, squash(document.title))
    if (note) notes.set(item.id, note)
    o.outbox.add(item)
    dock.say(sync.reachable === false ? 'Kept in this browser until the server is back.' : 'Sending…')
    dock.renderAlert()
    o.render.pins()
    void o.flush()
  }

  return {
    send(body, extras) {
      dock.say('Sending…')
      const { screenshot, images } = extras
      const options = { api: o.api, screenshot, images, log: extras.pageLog ? o.pageLog : undefined, exclude: o.host, budgetMs: o.options.screenshotBudgetMs, capture: o.options.capture }
      // A policy that blocks the screenshot is said with "Sent as #n", and in the box while Screenshot is ticked.
      void complete(body, extras.target, { ...options, blocked: (why) => o.ui?.composer.setShotNote(why.message) }).then(({ body: full, note }) => queue(full, note))
    },
    sent(item, annotation, sessionId) {
      const note = notes.get(item.id)
      notes.delete(item.id)
      if (sync.sent(item.pageKey, annotation, sessionId)) {
        o.render.all()
        const n = sync.numberOf(annotation.id)
        dock.say(note ? `Sent as #${n} ${note}` : `Sent as #${n}. ${agentState(sync.presence) === 'listening' ? 'The agent is on it.' : 'It waits for the agent.'}`)
      } else {
        dock.say('A kept annotation from another page was sent.')
      }
      sync.setReachable(true)
      dock.renderAlert()
    },
    blocked() {
      // Another project's server answers: it is reachable, and refused (the alert says why).
      if (o.api.foreign === undefined) sync.setReachable(false)
      else dock.say('Not sent, kept in this browser: this server is another project’s.')
      dock.renderAlert()
      o.render.list()
    },
    // The page's annotations now: the server's event for this one may come before the POST's answer.
    posting: (item) => o.outbox.posting(item.id, sync.ordered()),
    drained: () => dock.renderAlert(),
    rejected(_item, error) {
      dock.say(`An annotation could not be sent: ${error}`)
      dock.renderAlert()
      o.render.pins()
      o.render.list()
    },
  }
}
