/**
 * The toolbar's settings as the page holds them: the theme (auto follows `prefers-color-scheme`,
 * or light or dark), whether resolved and dismissed pins show, whether any pin shows; and the gear
 * that opens their menu. The theme and "show resolved" are remembered in this browser (per
 * origin); hiding all pins lasts until the page is left. The menu itself (its rows, and the
 * defaults of the composer's screenshot and page-log toggles) is drawn by ./settings-view.ts, in
 * the `ui` chunk: fetched when the gear is first pressed, with the menu's looks.
 */
import { h } from '../../shared/dom.js'
import { icon } from '../../shared/icons.js'
import type { Annotation } from '../../shared/types.js'
import type { Settings } from '../page/settings.js'

export type Theme = 'auto' | 'light' | 'dark'
export const THEMES: readonly Theme[] = ['auto', 'light', 'dark']

/** localStorage keys; the screenshot and page-log keys are the ones the composer reads. */
export const PREF_KEYS = {
  theme: 'marginalia:theme',
  showClosed: 'marginalia:show-resolved',
  screenshot: 'marginalia:screenshot',
  pageLog: 'marginalia:page-log',
} as const

export interface SettingsMenuEvents {
  /** Something that changes the pins or the theme changed: draw again. */
  changed(): void
  /** The page-log default was turned on or off. */
  pageLog(on: boolean): void
  /** The menu's view (the `ui` chunk) is wanted: it comes with the panels' stylesheet, adopted first. */
  view(): Promise<(menu: SettingsMenu, settings: Settings) => SettingsView>
  /** The menu's element, made: where it goes (above the toolbar). */
  place(element: HTMLElement): void
  /** The view could not be fetched (the server went away). */
  failed(): void
}

/** The menu as drawn (./settings-view.ts, in the `ui` chunk). */
export interface SettingsView {
  /** The menu (above the toolbar). */
  readonly element: HTMLDivElement
  readonly isOpen: boolean
  toggle(open: boolean): void
  /** The core's state changed other than from the menu (Alt+Shift+P hid the pins): show it. */
  sync(): void
  stop(): void
}

/** Resolved and dismissed: finished work, hidden from the page unless asked for. */
function isClosed(a: Annotation): boolean {
  return a.status === 'resolved' || a.status === 'dismissed'
}

export class SettingsMenu {
  /** The gear in the toolbar. */
  readonly button: HTMLButtonElement
  theme: Theme
  showClosed: boolean
  pinsHidden = false
  private readonly media: MediaQueryList | undefined
  /** The menu, once drawn. */
  private view: SettingsView | undefined
  /** Whether the menu is to be open when its view comes (the gear pressed again meanwhile: not). */
  private opening = false
  private stopped = false

  constructor(
    readonly settings: Settings,
    readonly events: SettingsMenuEvents,
    /** The element whose `data-theme` says light or dark (the overlay's root). */
    private readonly themed: HTMLElement,
  ) {
    const stored = settings.get(PREF_KEYS.theme)
    this.theme = THEMES.includes(stored as Theme) ? (stored as Theme) : 'auto'
    this.showClosed = settings.get(PREF_KEYS.showClosed) === 'on'
    this.media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined
    this.media?.addEventListener('change', this.applyTheme)

    this.button = h('button', {
      type: 'button',
      class: 'tool settings-btn',
      'aria-label': 'Settings',
      title: 'Settings: theme, resolved pins, capture defaults',
      'aria-haspopup': 'true',
      'aria-expanded': 'false',
      onclick: () => this.toggle(),
    }, icon('sliders'))
    this.applyTheme()
  }

  get isOpen(): boolean {
    return this.view?.isOpen ?? this.opening
  }

  /** Open or close the menu; the first opening fetches its view, and opens once it has come. */
  toggle(open = !this.isOpen): void {
    this.button.setAttribute('aria-expanded', String(open))
    if (this.view) return this.view.toggle(open)
    if (this.opening === open) return
    this.opening = open
    if (!open) return
    this.events.view().then(
      (make) => {
        if (this.stopped || this.view) return
        this.view = make(this, this.settings)
        this.events.place(this.view.element)
        if (this.opening) this.view.toggle(true)
        this.opening = false
      },
      () => {
        this.opening = false
        this.button.setAttribute('aria-expanded', 'false')
        if (!this.stopped) this.events.failed()
      },
    )
  }

  /** Whether annotation `a` gets a pin now (`openId`: the open thread's always does). */
  shows(a: Annotation, openId: string | undefined): boolean {
    return a.id === openId || this.showClosed || !isClosed(a)
  }

  setTheme(theme: Theme): void {
    this.theme = theme
    this.settings.set(PREF_KEYS.theme, theme)
    this.applyTheme()
    this.events.changed()
  }

  setShowClosed(show: boolean): void {
    this.showClosed = show
    this.settings.set(PREF_KEYS.showClosed, show ? 'on' : 'off')
    this.events.changed()
  }

  setPinsHidden(hidden: boolean): void {
    this.pinsHidden = hidden
    this.view?.sync()
    this.events.changed()
  }

  /** The theme in effect: `auto` reads the system's colour scheme. */
  get dark(): boolean {
    return this.theme === 'dark' || (this.theme === 'auto' && this.media?.matches === true)
  }

  stop(): void {
    this.stopped = true
    this.view?.stop()
    this.media?.removeEventListener('change', this.applyTheme)
  }

  private readonly applyTheme = (): void => {
    this.themed.setAttribute('data-theme', this.dark ? 'dark' : 'light')
  }
}
