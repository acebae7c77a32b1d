/**
 * The chunk of the panels' looks: ui.css, the styles of the comment box, an annotation's thread,
 * the list and the settings menu, which a page does not need before the person opens one; and the
 * settings menu as drawn. The overlay adopts the sheet into its shadow root when it loads (on
 * Annotate, a pin, the list or the menu, or when the browser is idle after load).
 */
import UI_CSS from './ui.css'

export const css: string = UI_CSS
export { settingsView } from '../views/settings-view.js'
