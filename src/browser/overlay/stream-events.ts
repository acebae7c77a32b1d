/**
 * Where what the page sync reports goes (its live stream, its loads, the server's health): a change
 * redraws; the agent's presence and the server's state go to the toolbar; an agent's reply is said
 * in the toast, or starts pointing when the agent asks the person to point; an annotation removed
 * elsewhere closes its open thread; a capture request is answered with a picture; a server that
 * answers again gets what waits in the outbox.
 */
import type { Api } from '../shared/api.js'
import type { Links } from '../shared/links.js'
import { load } from './chunks/load.js'
import type { Dock } from './views/dock.js'
import type { OutboxSender } from './sync/outbox.js'
import type { PageSync, SyncEvents } from './sync/page-sync.js'
import type { Pins } from './views/pins.js'
import type { Renderer } from './render.js'
import type { UiParts } from './ui-parts.js'

/** What the reports go to (the overlay itself is passed: its parts are read when a report comes). */
export interface StreamParts {
  readonly api: Api
  /** The overlay's host: never in a picture. */
  readonly host: Element
  readonly sync: PageSync
  readonly sender: OutboxSender
  readonly dock: Dock
  readonly pins: Pins
  /** Annotate mode and the panels, once their chunk has come. */
  readonly ui: UiParts | undefined
  /** Fetch that chunk (when needed) and act with it. */
  withUi(act: (ui: UiParts) => void): void
  readonly render: Renderer
  /** Where the thread's source links point: the editor, once the server says where the project is. */
  readonly links: Links
}

export function streamEvents(o: StreamParts): SyncEvents {
  const number = (id: string): number => o.sync.numberOf(id)
  return {
    health: (health) => {
      o.links.editor = health
    },
    changed: () => o.render.all(),
    presence: () => o.dock.renderAgent(),
    status: () => {
      o.dock.renderAgent()
      o.dock.renderAlert()
    },
    loaded: () => void o.sender.flush(),
    back: () => o.sender.retrySoon(),
    agentReplied: (a, reply) => {
      if (reply.kind === 'question' && reply.point) return o.withUi((ui) => ui.pointing.start(a, reply))
      if (o.ui?.thread.openId !== a.id) o.dock.say(reply.kind === 'question' ? `The agent asks about #${number(a.id)}` : `The agent replied on #${number(a.id)}`)
    },
    removed: (id, how) => {
      if (o.ui?.thread.openId !== id) return
      o.ui.panels.closeThread()
      o.dock.say(`That annotation was ${how}.`)
    },
    captureRequested: (e) =>
      void load('extras')
        .then((chunk) => chunk.answerCapture(e, {
        api: o.api,
        host: o.host,
        get: (id) => o.sync.get(id),
        anchor: (a) => {
          o.pins.anchors.forget(a.id)
          return o.pins.anchors.of(a)
        },
        looked: (a) => o.dock.say(e.attachTo === undefined ? `The agent looked at #${number(a.id)}.` : `#${number(a.id)} resolved: its "after" picture is in the thread.`),
        }))
        .catch(() => {}), // nothing to tell the person: the agent hears the timeout
  }
}
