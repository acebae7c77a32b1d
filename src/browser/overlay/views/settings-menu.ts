/**
 * The toolbar's settings menu: the theme (auto follows `prefers-color-scheme`, or light
 * or dark), whether resolved and dismissed pins show, whether any pin shows, and the defaults of
 * the composer's screenshot and page-log toggles. The theme and "show resolved" are remembered in
 * this browser (per origin); hiding all pins lasts until the page is left.
 */
import { h } from '../../shared/dom.js'
import type { Annotation } from '../../shared/types.js'
import type { Settings } from '../page/settings.js'

export type Theme = 'auto' | 'light' | 'dark'
const THEMES: readonly Theme[] = ['auto', 'light', 'dark']

/** localStorage keys; the screenshot and page-log keys are the ones the composer reads. */
const PREF_KEYS = {
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
}

/** Resolved and dismissed: finished work, hidden from the page unless asked for. */
function isClosed(a: Annotation): boolean {
  return a.status === 'resolved' || a.status === 'dismissed'
}

export class SettingsMenu {
  /** The gear in the toolbar. */
  readonly button: HTMLButtonElement
  /** The menu itself (above the toolbar). */
  readonly element: HTMLDivElement
  theme: Theme
  showClosed: boolean
  pinsHidden = false
  private readonly media: MediaQueryList | undefined
  private readonly pinsBox: HTMLInputElement
  private readonly themeInputs: HTMLInputElement[]

  constructor(
    private readonly settings: Settings,
    private readonly events: SettingsMenuEvents,
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
    }, '⚙')
    this.themeInputs = THEMES.map((t) =>
      h('input', {
        type: 'radio',
        name: 'mg-theme',
        value: t,
        checked: t === this.theme,
        onchange: () => {
          this.theme = t
          settings.set(PREF_KEYS.theme, t)
          this.applyTheme()
          events.changed()
        },
      }),
    )
    const closed = h('input', {
      type: 'checkbox',
      name: 'show-resolved',
      checked: this.showClosed,
      onchange: (e: Event) => {
        this.showClosed = (e.target as HTMLInputElement).checked
        settings.set(PREF_KEYS.showClosed, this.showClosed ? 'on' : 'off')
        events.changed()
      },
    })
    this.pinsBox = h('input', { type: 'checkbox', name: 'hide-pins', onchange: (e: Event) => this.setPinsHidden((e.target as HTMLInputElement).checked) })
    const shot = h('input', { type: 'checkbox', name: 'screenshot-default', checked: settings.get(PREF_KEYS.screenshot) !== 'off', onchange: (e: Event) => settings.set(PREF_KEYS.screenshot, (e.target as HTMLInputElement).checked ? 'on' : 'off') })
    const log = h('input', {
      type: 'checkbox',
      name: 'page-log-default',
      checked: settings.get(PREF_KEYS.pageLog) !== 'off',
      onchange: (e: Event) => {
        const on = (e.target as HTMLInputElement).checked
        settings.set(PREF_KEYS.pageLog, on ? 'on' : 'off')
        events.pageLog(on)
      },
    })
    const row = (input: HTMLInputElement, text: string, hint?: string) => h('label', { class: 'menu-row', title: hint }, input, h('span', {}, text))
    this.element = h(
      'div',
      { class: 'menu', role: 'group', 'aria-label': 'Marginalia settings', hidden: true },
      h('fieldset', {}, h('legend', {}, 'Theme'), h('div', { class: 'seg' }, ...this.themeInputs.map((input, i) => h('label', {}, input, h('span', {}, THEMES[i]!))))),
      row(closed, 'Show resolved and dismissed pins'),
      row(this.pinsBox, 'Hide all pins', 'Alt+Shift+P'),
      h('div', { class: 'menu-sep', 'aria-hidden': 'true' }),
      row(shot, 'Screenshot by default', 'Attach a picture of the element to new annotations'),
      row(log, 'Page log by default', 'Attach console errors and failed requests to new annotations'),
    )
    this.applyTheme()
  }

  get isOpen(): boolean {
    return !this.element.hidden
  }

  toggle(open = !this.isOpen): void {
    this.element.hidden = !open
    this.button.setAttribute('aria-expanded', String(open))
    if (open) {
      this.themeInputs.find((i) => i.checked)?.focus()
      window.addEventListener('pointerdown', this.onOutside, true)
    } else window.removeEventListener('pointerdown', this.onOutside, true)
  }

  /** A press outside the menu (and its gear) closes it. */
  private readonly onOutside = (e: PointerEvent): void => {
    const path = e.composedPath()
    if (!path.includes(this.element) && !path.includes(this.button)) this.toggle(false)
  }

  /** Whether annotation `a` gets a pin now (`openId`: the open thread's always does). */
  shows(a: Annotation, openId: string | undefined): boolean {
    return a.id === openId || this.showClosed || !isClosed(a)
  }

  setPinsHidden(hidden: boolean): void {
    this.pinsHidden = hidden
    this.pinsBox.checked = hidden
    this.events.changed()
  }

  /** The theme in effect: `auto` reads the system's colour scheme. */
  get dark(): boolean {
    return this.theme === 'dark' || (this.theme === 'auto' && this.media?.matches === true)
  }

  stop(): void {
    window.removeEventListener('pointerdown', this.onOutside, true)
    this.media?.removeEventListener('change', this.applyTheme)
  }

  private readonly applyTheme = (): void => {
    this.themed.setAttribute('data-theme', this.dark ? 'dark' : 'light')
  }
}
