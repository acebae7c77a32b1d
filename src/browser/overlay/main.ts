/**
 * The Marginalia overlay: one script tag in any page —
 *
 *   <script src="http://127.0.0.1:4848/overlay.js" defer></script>
 *
 * — and the person can point at an element (or select text), write what is wrong, and watch the
 * agent answer. It talks to the server the script came from (REST + Server-Sent Events), lives
 * in a shadow root (the page's CSS and ours never meet), and adds one global, `window.Marginalia`.
 */
import { Overlay } from './overlay.js'
import { publicApi } from './public-api.js'
import { maskInputsAttribute } from '../early/steps-settings.js'
import { setChunkBases } from './chunks/load.js'

/** The server's base URL: `data-server` on the script tag, else the directory the script was loaded from. */
function serverFromScript(script: HTMLScriptElement | null): string | undefined {
  if (!script) return undefined
  const given = script.dataset.server
  if (given) return given.replace(/\/+$/, '')
  if (!script.src) return undefined
  return new URL('.', script.src).href.replace(/\/+$/, '')
}

/** Start once per page, from the script tag that loaded us. */
/** `data-screenshot-budget` in ms (200 to 60 000), or undefined for the default; a wrong value is said on the console. */
function screenshotBudget(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const ms = Number(raw)
  if (Number.isInteger(ms) && ms >= 200 && ms <= 60_000) return ms
  console.warn(`Marginalia: data-screenshot-budget="${raw}" is not a number of milliseconds from 200 to 60000; using 1000.`)
  return undefined
}

/** `data-prefetch`: "idle", "false", or anything else (absent) for on intent. */
function prefetchAttribute(raw: string | undefined): 'intent' | 'idle' | false {
  return raw === 'false' ? false : raw === 'idle' ? 'idle' : 'intent'
}

function boot(): void {
  if (window.Marginalia) return
  const script = (document.currentScript as HTMLScriptElement | null) ?? document.querySelector<HTMLScriptElement>('script[src*="overlay.js"]')
  const server = serverFromScript(script)
  if (!server) {
    console.warn('Marginalia: could not tell which server this overlay came from; add data-server="http://127.0.0.1:4848" to its script tag.')
    return
  }
  // data-shortcut="Ctrl+Alt+M": the annotate shortcut (the Vite plugin's `shortcut` option sets it).
  // data-screenshot-budget="3000": how long a screenshot may take, in ms (a slow machine or a huge page).
  // data-mask-inputs="true": no typed value in the steps to reproduce (default: masked unless a local dev origin).
  // data-store / data-project: the project this page belongs to (the build plugins set them); another project's server gets nothing.
  // data-prefetch: when the chunks are fetched — on intent (default: the pointer on the toolbar, Annotate focused or pressed),
  // "idle" (when the browser is idle after load) or "false" (on first use only).
  // The chunks (chunks/<name>-<HASH>.js) sit beside this script, else on the server.
  setChunkBases([...(script?.src ? [new URL('.', script.src).href] : []), `${server}/`])
  const expect = { ...(script?.dataset.store ? { store: script.dataset.store } : {}), ...(script?.dataset.project ? { project: script.dataset.project } : {}) }
  const overlay = new Overlay(server, { shortcut: script?.dataset.shortcut, screenshotBudgetMs: screenshotBudget(script?.dataset.screenshotBudget), maskInputs: maskInputsAttribute(script?.dataset.maskInputs), prefetch: prefetchAttribute(script?.dataset.prefetch), expect })
  window.Marginalia = publicApi(overlay)
  const start = () => overlay.mount()
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true })
  else start()
}

if (typeof window !== 'undefined' && typeof document !== 'undefined') boot()
