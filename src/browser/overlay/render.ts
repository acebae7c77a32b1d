/**
 * Drawing the overlay from what it knows: the pins, the toolbar's count, agent and alert, the open
 * thread and the list, re-rendered from the page's annotations and the outbox; then everything
 * laid out at most once a frame — pins on their elements, the highlight on the hovered element,
 * panels beside what they belong to. Whoever changes something asks for a render; rendering twice
 * is harmless.
 */
import type { Dock } from './views/dock.js'
import { FrameLayout, placeDock } from './views/layout.js'
import { waitingOn, type Outbox } from './sync/outbox.js'
import type { PageSync } from './sync/page-sync.js'
import type { Pins } from './views/pins.js'
import type { SettingsMenu } from './views/settings-menu.js'
import type { UiParts } from './ui-parts.js'

/** What is drawn (the overlay itself is passed: its parts are read when drawn). */
export interface DrawnParts {
  readonly host: Element
  readonly sync: PageSync
  readonly outbox: Outbox
  readonly pins: Pins
  readonly dock: Dock
  /** Annotate mode and the panels, once their chunk has come (chunks/annotate.ts). */
  readonly ui: UiParts | undefined
  readonly menu: SettingsMenu
  /** Whether the page's changes are watched: only while something on it is followed (anchor/follow.ts). */
  readonly follower: { watch(on: boolean): void }
}

export class Renderer {
  /** The element under the pointer in annotate mode. */
  private hovered: Element | undefined
  private stopped = false
  private readonly layout = new FrameLayout(() => this.position())
  /** Lay out in the next frame (once, however often asked). */
  readonly schedule = this.layout.schedule

  constructor(
    private readonly o: DrawnParts,
    /** The open thread's annotation is gone: close its panel. */
    private readonly threadGone: () => void,
  ) {}

  /** Lay out now, unless done this frame already (then in the next). */
  now(): void {
    this.layout.now()
  }

  hover(element: Element | undefined): void {
    if (element === this.hovered) return
    this.hovered = element
    this.schedule()
  }

  /** Drop the hover highlight (the comment box opened on what was hovered). */
  unhover(): void {
    this.hovered = undefined
  }

  stop(): void {
    this.stopped = true
    this.layout.stop()
  }

  all(): void {
    const { sync, dock, ui } = this.o
    this.drawPins()
    dock.renderCount(sync.ordered())
    dock.renderAgent()
    const id = ui?.thread.openId
    const a = id === undefined ? undefined : sync.get(id)
    if (a) ui!.thread.render(a, sync.numberOf(a.id))
    else this.threadGone()
    this.list()
    dock.renderAlert()
  }

  pins(): void {
    this.drawPins()
    this.position()
  }

  list(): void {
    const { ui, sync, outbox } = this.o
    if (ui?.list.isOpen) {
      const ordered = sync.ordered()
      ui.list.render(ordered, outbox.shown(ordered))
    }
    this.position()
  }

  private drawPins(): void {
    const { pins, sync, outbox, ui } = this.o
    pins.element.hidden = this.o.menu.pinsHidden || this.o.dock.collapsed
    const ordered = sync.ordered()
    const waiting = waitingOn(outbox, sync.pageKey, ordered)
    pins.render(ordered, ui?.thread.openId, waiting)
    this.o.follower.watch(ordered.length + waiting.length > 0 || ui?.picker.active === true || ui?.composer.target !== undefined)
  }

  /** Pins on their elements, the highlight on the hovered element, panels beside what they belong to. */
  position(): void {
    if (this.stopped) return
    const { sync, outbox, pins, dock, ui } = this.o
    const ordered = sync.ordered()
    const openPin = pins.position([...ordered, ...waitingOn(outbox, sync.pageKey, ordered)], ui?.thread.openId)
    placeDock(dock.element, this.o.host)
    if (!ui) return
    const { picker, marks, composer, thread, list } = ui
    picker.layout()
    marks.hover(picker.active && !composer.target && this.hovered?.isConnected ? this.hovered : undefined)
    // The toolbar's height matters only to a panel placed above it: unread otherwise (reading lays the page out).
    const reserve = composer.target !== undefined || thread.openId !== undefined || list.isOpen ? dock.reserve() : 0
    // Dashed outlines on what the open box or thread is about; the selected words marked.
    const outlined = composer.place(reserve)
    let words: DOMRect[] = []
    const id = thread.openId
    if (id !== undefined) {
      const a = sync.get(id)
      const placed = thread.place(a ? pins.anchors.of(a) : undefined, openPin, reserve)
      outlined.push(...placed.outlined)
      words = placed.words
    }
    marks.outlineAround(outlined)
    marks.mark(words)
    if (list.isOpen) list.place(reserve)
  }
}
