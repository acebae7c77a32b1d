/**
 * The chunk of what the person uses once they act: annotate mode (the picker, the hover and area
 * marks), freezing the page, the comment box, pointing for an agent's question, an annotation's thread, the list and
 * the panels' focus handling, with what they do (../actions.ts). overlay.js fetches it on intent
 * (the pointer on the toolbar, Annotate focused or pressed, the shortcut, a pin, the public API)
 * and builds the parts once with {@link createUi}, into the overlay's shadow root.
 */
import type { Api } from '../../shared/api.js'
import type { Links } from '../../shared/links.js'
import type { StepsHandle } from '../../early/steps.js'
import { listActions, threadActions } from '../actions.js'
import { describeElement } from '../anchor/describe.js'
import { Composer, type ComposerEvents } from '../annotate/composer.js'
import { Picker } from '../annotate/picker.js'
import { Pointing } from '../annotate/point.js'
import { adoptStyles } from '../page/csp.js'
import { Freezer } from '../page/freeze.js'
import { Panels } from '../panels.js'
import type { Renderer } from '../render.js'
import { coarsePointer } from '../views/layout.js'
import type { Dock } from '../views/dock.js'
import { ListPanel } from '../views/list-panel.js'
import { Marks } from '../views/marks.js'
import type { Pins } from '../views/pins.js'
import { ThreadPanel } from '../views/thread-panel.js'
import type { UiParts } from '../ui-parts.js'
import type { Outbox, OutboxSender } from '../sync/outbox.js'
import type { PageSync } from '../sync/page-sync.js'
import ANNOTATE_CSS from './annotate.css'
import type { complete } from './extras.js'

/** What the parts need of the overlay's core (overlay.ts passes itself). */
export interface UiHost {
  readonly server: string
  readonly api: Api
  readonly host: HTMLElement
  readonly shadow: ShadowRoot
  readonly sync: PageSync
  readonly outbox: Outbox
  readonly sender: OutboxSender
  readonly dock: Dock
  readonly pins: Pins
  readonly render: Renderer
  readonly links: Links
  readonly steps: StepsHandle | undefined
  readonly options: { readonly screenshotBudgetMs?: number | undefined }
  /** The annotate shortcut as written in the list's hint. */
  readonly shortcutText: string
  /** Where Send goes (sending.ts). */
  readonly outgoing: { send: ComposerEvents['send'] }
  /** The panels' stylesheet, fetched if it is not there yet. */
  readonly styleUi: () => void
  /** Above the page's top layer again; `walk`: the page's shadow roots looked through first (once). */
  raiseTopLayer(walk?: boolean): void
  /** Fetch the `extras` chunk now (Send will need it). */
  warmExtras(): void
  /** The annotation as sent (chunks/load.ts), for pointing's answers. */
  readonly complete: typeof complete
  startPageLog(on: boolean): void
}

/**
 * The parts, with their stylesheet (./annotate.css), their elements put into the overlay's root (`root`: the marks under the pins, the
 * panels under the dock) and the picker listening.
 */
export function createUi(o: UiHost, root: HTMLElement): UiParts {
  adoptStyles(o.shadow, ANNOTATE_CSS)
  const marks = new Marks()
  // The highlight is drawn in the pointer's own task, not a frame later: at most once a frame (the
  // render's layout in the next frame draws it again, and draws later moves of this frame).
  let drawn = false
  const picker: Picker = new Picker(o.host, {
    pick: (target, add) => panels.compose(add ? composer.withMore(target) : target),
    dragging: (rect) => marks.drag(rect),
    hover: (element) => {
      o.render.hover(element)
      if (drawn) return
      drawn = true
      requestAnimationFrame(() => (drawn = false))
      marks.hover(composer.target ? undefined : element)
    },
    changed: (on) => {
      o.dock.setAnnotating(on)
      o.steps?.pause(on)
      if (on) {
        // What Send needs is fetched while the person picks.
        o.warmExtras()
        o.styleUi()
        o.raiseTopLayer()
      }
      o.render.pins()
      if (on) o.dock.say(coarsePointer() ? 'Tap an element or select text to annotate it. Tap Annotate again to stop.' : 'Click an element or select text to annotate it. Esc to stop.')
    },
    composing: () => composer.target !== undefined,
    // Annotate mode has answered and the browser is idle: modal dialogs and popovers in shadow roots not met yet are looked for.
    settled: () => o.raiseTopLayer(true),
  })
  const composer: Composer = new Composer({
    send: (body, extras) => {
      if (pointing.active) return void pointing.answer(body, extras.target)
      o.outgoing.send(body, extras)
      o.steps?.mark()
    },
    steps: () => o.steps?.recent() ?? [],
    pageLog: (on) => o.startPageLog(on),
    closed: (restoreFocus) => panels.composerClosed(restoreFocus),
  })
  const parts = { ...pick(o), picker, marks, composer }
  const panels: Panels = new Panels({ ...parts, get thread() { return thread }, get list() { return list } }, o.shadow)
  const acting = { ...pick(o), shadow: o.shadow, panels }
  const thread = new ThreadPanel(o.shadow, threadActions(acting), o.api, o.links)
  const list = new ListPanel(o.server, listActions(acting), o.shortcutText)
  const pointing = new Pointing({
    api: o.api,
    host: o.host,
    budgetMs: o.options.screenshotBudgetMs,
    complete: o.complete,
    annotate: () => picker.set(true),
    say: (text) => o.dock.say(text),
    answered: (a) => {
      picker.set(false)
      o.sync.offer(a)
      o.render.all()
    },
  })
  root.insertBefore(marks.words, o.pins.element)
  for (const el of [marks.highlight, marks.outline, marks.band, picker.shields, composer.element, thread.element, list.element]) root.insertBefore(el, o.dock.element)
  picker.attach()
  return {
    picker,
    marks,
    composer,
    thread,
    list,
    pointing,
    panels,
    freezer: new Freezer(o.host),
    comment: (element) => panels.compose({ element, info: describeElement(element) }),
    stop: () => picker.detach(),
  }
}

/** The core's parts the panels and the actions read (plain fields, read once: they never change). */
function pick(o: UiHost) {
  const { api, sync, outbox, sender, dock, pins, render, styleUi } = o
  return { api, sync, outbox, sender, dock, pins, render, styleUi }
}
