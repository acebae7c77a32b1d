/**
 * The settings menu as drawn (in the `ui` chunk): the theme, whether resolved and dismissed pins
 * show, whether any pin shows, and the defaults of the composer's screenshot and page-log toggles.
 * What the rows change is the core's (./settings-menu.ts), which the page needs before the menu
 * is ever opened: the theme and which pins show.
 */
import { h } from '../../shared/dom.js'
import type { Settings } from '../page/settings.js'
import { PREF_KEYS, THEMES, type SettingsMenu, type SettingsView } from './settings-menu.js'

export function settingsView(menu: SettingsMenu, settings: Settings): SettingsView {
  const themeInputs = THEMES.map((t) => h('input', { type: 'radio', name: 'mg-theme', value: t, checked: t === menu.theme, onchange: () => menu.setTheme(t) }))
  const checked = (e: Event): boolean => (e.target as HTMLInputElement).checked
  const closed = h('input', { type: 'checkbox', name: 'show-resolved', checked: menu.showClosed, onchange: (e: Event) => menu.setShowClosed(checked(e)) })
  const pinsBox = h('input', { type: 'checkbox', name: 'hide-pins', checked: menu.pinsHidden, onchange: (e: Event) => menu.setPinsHidden(checked(e)) })
  const shot = h('input', { type: 'checkbox', name: 'screenshot-default', checked: settings.get(PREF_KEYS.screenshot) !== 'off', onchange: (e: Event) => settings.set(PREF_KEYS.screenshot, checked(e) ? 'on' : 'off') })
  const log = h('input', {
    type: 'checkbox',
    name: 'page-log-default',
    checked: settings.get(PREF_KEYS.pageLog) !== 'off',
    onchange: (e: Event) => {
      const on = checked(e)
      settings.set(PREF_KEYS.pageLog, on ? 'on' : 'off')
      menu.events.pageLog(on)
    },
  })
  const row = (input: HTMLInputElement, text: string, hint?: string) => h('label', { class: 'menu-row', title: hint }, input, h('span', {}, text))
  const element = h(
    'div',
    { class: 'menu', role: 'group', 'aria-label': 'Marginalia settings', hidden: true },
    h('fieldset', {}, h('legend', {}, 'Theme'), h('div', { class: 'seg' }, ...themeInputs.map((input, i) => h('label', {}, input, h('span', {}, THEMES[i]!))))),
    row(closed, 'Show resolved and dismissed pins'),
    row(pinsBox, 'Hide all pins', 'Alt+Shift+P'),
    h('div', { class: 'menu-sep', 'aria-hidden': 'true' }),
    row(shot, 'Screenshot by default', 'Attach a picture of the element to new annotations'),
    row(log, 'Page log by default', 'Attach console errors and failed requests to new annotations'),
  )
  /** A press outside the menu (and its gear) closes it. */
  const onOutside = (e: PointerEvent): void => {
    const path = e.composedPath()
    if (!path.includes(element) && !path.includes(menu.button)) menu.toggle(false)
  }
  return {
    element,
    get isOpen() {
      return !element.hidden
    },
    toggle(open) {
      element.hidden = !open
      if (open) {
        themeInputs.find((i) => i.checked)?.focus()
        window.addEventListener('pointerdown', onOutside, true)
      } else window.removeEventListener('pointerdown', onOutside, true)
    },
    sync() {
      pinsBox.checked = menu.pinsHidden
    },
    stop() {
      window.removeEventListener('pointerdown', onOutside, true)
    },
  }
}
