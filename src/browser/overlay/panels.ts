/**
 * One panel open at a time — the comment box, an annotation's thread, the list — and the keyboard
 * focus taken back to where it was when the panel closes. Esc closes the innermost open thing.
 */
import { viewRect } from './anchor/dom.js'
import type { Composer } from './annotate/composer.js'
import type { Dock } from './views/dock.js'
import { FocusReturn } from './views/focus.js'
import type { ListPanel } from './views/list-panel.js'
import type { PageSync } from './sync/page-sync.js'
import type { Picker, Target } from './annotate/picker.js'
import type { Pins } from './views/pins.js'
import type { Renderer } from './render.js'
import type { ThreadPanel } from './views/thread-panel.js'

/** What the panels are (the overlay itself is passed: its parts are read when used). */
export interface PanelParts {
  readonly sync: PageSync
  readonly pins: Pins
  readonly picker: Picker
  readonly composer: Composer
  readonly thread: ThreadPanel
  readonly list: ListPanel
  readonly dock: Dock
  readonly render: Renderer
  /** The panels' stylesheet, fetched if it is not there yet (overlay.ts). */
  readonly styleUi: () => void
}

export class Panels {
  private readonly focusBack: FocusReturn

  constructor(
    private readonly o: PanelParts,
    /** The overlay's shadow root: where the focus is read from. */
    shadow: ShadowRoot,
  ) {
    this.focusBack = new FocusReturn(shadow)
  }

  /** The comment box on `target` (the thread and the list close). */
  compose(target: Target): void {
    this.o.styleUi()
    const { composer, render } = this.o
    const fresh = composer.target === undefined
    this.closeThread()
    this.toggleList(false)
    if (fresh) this.focusBack.rememberActive(this.o.dock.annotateButton)
    composer.open(target)
    render.unhover()
    render.pins()
    composer.focus()
  }

  /** The comment box closed (sent, cancelled, or the page changed). */
  composerClosed(restoreFocus: boolean): void {
    this.o.render.pins()
    if (restoreFocus) this.focusBack.restore()
  }

  /** An annotation's thread, its element scrolled into view when it is off screen. */
  open(id: string): void {
    this.o.styleUi()
    const { sync, thread, pins } = this.o
    const a = sync.get(id)
    if (!a) return
    this.o.composer.close(false)
    this.toggleList(false)
    if (thread.openId === undefined) this.focusBack.rememberActive(this.o.dock.annotateButton)
    thread.open(a, sync.numberOf(id))
    this.o.render.pins()
    const el = pins.elementOf(a)
    if (el) {
      const r = viewRect(el)
      if (r.bottom < 0 || r.top > window.innerHeight) el.scrollIntoView({ block: 'center', behavior: 'smooth' })
    }
    thread.focus(a)
  }

  closeThread(): void {
    const { thread } = this.o
    if (thread.openId === undefined) return
    thread.close()
    this.o.render.pins()
    this.focusBack.restore()
  }

  toggleList(open = !this.o.list.isOpen): void {
    const { list, dock } = this.o
    if (open === list.isOpen) return
    dock.setListOpen(open)
    if (open) {
      this.o.styleUi()
      this.o.composer.close(false)
      this.closeThread()
      this.focusBack.remember(dock.countButton)
      list.open()
      this.o.render.list()
      list.element.focus()
    } else {
      list.close()
    }
  }

  /** Close the innermost open thing (the settings menu aside: the core closes it); false when nothing was open. */
  escape(): boolean {
    const { composer, picker } = this.o
    if (composer.target) composer.escape()
    else if (this.o.thread.openId !== undefined) this.closeThread()
    else if (this.o.list.isOpen) this.toggleList(false)
    else if (picker.active) picker.set(false)
    else return false
    return true
  }
}
