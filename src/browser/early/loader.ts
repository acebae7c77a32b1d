/**
 * `loader.js`: the script a page without a build plugin puts first in its <head> (the head
 * snippet, `headSnippet` in src/integrations/shared/loader-script.ts). It starts the page log and
 * the steps' recorder from that line (./page-log.ts, ./steps.ts; `data-mask-inputs` on its tag is
 * the `maskInputs` setting) and then loads `overlay.js` from the same server, handing it the `data-*`
 * attributes of its own tag (data-shortcut, data-screenshot-budget, data-server …). It marks the
 * page at `window[Symbol.for('marginalia.loader')]`: the snippet's inline part, which runs next,
 * shows the "server not running" note when that mark is missing.
 */
import { installPageLog, pageLogEnabled } from './page-log.js'
import { installSteps } from './steps.js'
import { maskInputsAttribute, stepsEnabled } from './steps-settings.js'

const MARK = Symbol.for('marginalia.loader')
type MarkedWindow = Window & { [MARK]?: true }

function load(): void {
  const w = window as MarkedWindow
  if (w[MARK]) return
  w[MARK] = true
  if (pageLogEnabled()) installPageLog(window)
  const self = document.currentScript as HTMLScriptElement | null
  if (stepsEnabled()) {
    const steps = installSteps(window)
    const mask = maskInputsAttribute(self?.getAttribute('data-mask-inputs'))
    if (mask !== undefined) steps.mask(mask)
  }
  if (!self?.src || window.Marginalia) return
  const overlay = document.createElement('script')
  overlay.src = new URL('overlay.js', self.src).href
  for (const { name, value } of Array.from(self.attributes)) if (name.startsWith('data-') && name !== 'data-marginalia-loader') overlay.setAttribute(name, value)
  overlay.setAttribute('data-marginalia', '')
  ;(document.head ?? document.documentElement).appendChild(overlay)
}

try {
  load()
} catch {
  // the loader never disturbs the page
}
