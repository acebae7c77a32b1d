/**
 * What the core knows of annotate mode and the panels, which come in the `annotate` chunk
 * (chunks/annotate.ts builds them): the overlay holds them once the chunk has come, and asks for
 * the chunk when the person acts.
 */
import type { Composer } from './annotate/composer.js'
import type { Picker, Target } from './annotate/picker.js'
import type { Pointing } from './annotate/point.js'
import type { Freezer } from './page/freeze.js'
import type { ListPanel } from './views/list-panel.js'
import type { Marks } from './views/marks.js'
import type { ThreadPanel } from './views/thread-panel.js'

/** One panel open at a time (panels.ts). */
interface PanelsFace {
  compose(target: Target): void
  open(id: string): void
  closeThread(): void
  toggleList(open?: boolean): void
  /** Close the innermost open panel or annotate mode; false when nothing was open. */
  escape(): boolean
}

export interface UiParts {
  readonly picker: Picker
  readonly marks: Marks
  readonly composer: Composer
  readonly thread: ThreadPanel
  readonly list: ListPanel
  readonly pointing: Pointing
  readonly panels: PanelsFace
  /** Freezing the page (the toolbar's freeze button). */
  readonly freezer: Freezer
  /** The comment box on `element` (as a click in annotate mode opens it). */
  comment(element: Element): void
  /** Take the picker's listeners off the page (the overlay is removed). */
  stop(): void
}
