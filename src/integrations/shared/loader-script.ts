/**
 * The tiny loader the Vite plugin puts first in every page's <head>, the only tag it adds to the
 * page: it adds the overlay's script itself (its URL is known once the plugin's server has
 * started, and only the loader waits for that, not the page's HTML). When the overlay
 * script cannot be loaded — the Marginalia server is not running — it says so on the page, with
 * the command that starts it on the right port, and loads the overlay as soon as the server
 * answers (no reload). When the page's Content-Security-Policy blocked the script, it names the
 * directive instead. A classic script from the dev server's own origin (`'self'`): nothing inline.
 * It starts with the page log's recorder (`early.js`, src/browser/early): being first in <head>,
 * the page log records from the page's first line, and the overlay takes it over when it mounts.
 */

/** Where the plugin serves it, under the dev server's base. */
export const LOADER_PATH = '__marginalia-loader.js'

export interface LoaderOptions {
  /** The overlay script's URL as the page loads it (absolute, or a path on the dev server). */
  overlay: string
  /** What to run to start the server, e.g. `npx --no-install marginalia serve --port 4848`. */
  command: string
  /** The page log's recorder (the built `early.js`), run first; left out when not built. */
  early?: string
  /** The annotate shortcut, given to the overlay as `data-shortcut` (the plugin's `shortcut` option). */
  shortcut?: string
  /** The project the page belongs to (`data-store`: its store's id, `data-project`: its name): the overlay sends nothing to another project's server. */
  expect?: { store?: string; project?: string }
}

/** The loader's source: plain ES2017 for any dev browser, one IIFE, no globals. */
export function loaderScript({ overlay, command, early, shortcut, expect }: LoaderOptions): string {
  const recorder = early ? `${early.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '').trim()}\n` : ''
  return `${recorder}/* Marginalia loader: says so when the overlay cannot load. */
(function () {
  var OVERLAY = ${JSON.stringify(overlay)}
  var COMMAND = ${JSON.stringify(command)}
  var SHORTCUT = ${JSON.stringify(shortcut ?? '')}
  var EXPECT = ${JSON.stringify({ ...(expect?.store !== undefined ? { store: expect.store } : {}), ...(expect?.project !== undefined ? { project: expect.project } : {}) })}
  var overlayUrl = new URL(OVERLAY, location.href).href
  var blocked = ''
  var note = null
  var text = null
  var tries = 0
  function ours(url) { return typeof url === 'string' && url.indexOf(overlayUrl) === 0 }
  document.addEventListener('securitypolicyviolation', function (e) {
    if (ours(e.blockedURI)) blocked = e.effectiveDirective
  }, true)
  function show(message) {
    if (!note) {
      note = document.createElement('div')
      note.setAttribute('data-marginalia-loader', '')
      note.setAttribute('role', 'status')
      note.style.cssText = 'position:fixed;right:16px;bottom:16px;z-index:2147483647;max-width:min(420px,calc(100vw - 32px));padding:10px 36px 10px 14px;border-radius:12px;background:#0f172a;color:#f8fafc;font:13px/1.45 system-ui,sans-serif;box-shadow:0 10px 30px rgba(15,23,42,.35)'
      text = document.createElement('span')
      var close = document.createElement('button')
      close.type = 'button'
      close.textContent = '\\u00d7'
      close.setAttribute('aria-label', 'Dismiss')
      close.style.cssText = 'position:absolute;top:6px;right:8px;border:0;background:transparent;color:inherit;font:18px/1 system-ui,sans-serif;cursor:pointer'
      close.onclick = function () { note.remove() }
      note.appendChild(text)
      note.appendChild(close)
      document.documentElement.appendChild(note)
    }
    text.textContent = message
  }
  function add(src) {
    var s = document.createElement('script')
    s.src = src
    s.setAttribute('data-marginalia', '')
    if (SHORTCUT) s.setAttribute('data-shortcut', SHORTCUT)
    for (var k in EXPECT) s.setAttribute('data-' + k, EXPECT[k])
    ;(document.head || document.documentElement).appendChild(s)
    return s
  }
  function retry() {
    // The server may come up: try again, less and less often, and the overlay appears by itself.
    setTimeout(function () {
      if (window.Marginalia) return
      var s = add(OVERLAY + (OVERLAY.indexOf('?') < 0 ? '?' : '&') + 'retry=' + (++tries))
      s.onload = function () { if (note) note.remove() }
      s.onerror = function () { s.remove(); retry() }
    }, Math.min(30000, 2000 * Math.pow(1.5, tries)))
  }
  document.addEventListener('error', function (e) {
    var t = e.target
    if (!t || t.tagName !== 'SCRIPT' || !ours(t.src) || tries > 0) return
    // The violation event comes in its own task: give it one.
    setTimeout(function () {
      if (blocked) show('This page\\u2019s Content-Security-Policy blocks Marginalia: add ' + new URL(overlayUrl).origin + ' to ' + blocked + ' (or use marginalia({ sameOrigin: true })).')
      else {
        show('Marginalia server not running \\u2014 start it with \`' + COMMAND + '\`')
        retry()
      }
    }, 0)
  }, true)
  // The overlay waits for the document itself (it mounts on DOMContentLoaded).
  add(OVERLAY)
})()
`
}

/** The note's look in the head snippet's inline part: the loader's above, clickable to dismiss. */
const NOTE_STYLE = 'position:fixed;right:16px;bottom:16px;z-index:2147483647;max-width:min(420px,calc(100vw - 32px));padding:10px 14px;border-radius:12px;background:#0f172a;color:#f8fafc;font:13px/1.45 system-ui,sans-serif;box-shadow:0 10px 30px rgba(15,23,42,.35);cursor:pointer'

export interface HeadSnippetOptions {
  /** The Marginalia server's base URL, e.g. `http://127.0.0.1:4848`. */
  server: string
  /** What to run to start it, said on the page when it is not running. */
  command: string
  /** The project's name (`data-project` on the loader's tag): the overlay sends nothing to another project's server. */
  project?: string
}

/**
 * The head snippet for every set-up without a build plugin (server-rendered apps, plain HTML,
 * Angular): first in <head>, in development only. Its first tag, `loader.js` from the server,
 * starts the page log on that line and loads the overlay; a classic script that blocks for a
 * moment, on purpose, so the page log is in place before the page's own scripts. The inline
 * second tag runs right after: when `loader.js` did not run (the server is not running), it shows
 * the same note as the Vite plugin's loader and tries again, less and less often, until the
 * server answers — then the overlay appears without a reload. It logs nothing on the console.
 */
export function headSnippet({ server, command, project }: HeadSnippetOptions): string {
  const base = server.replace(/\/+$/, '')
  const loader = `${base}/loader.js`
  const message = `Marginalia server not running \\u2014 start it with \`${command}\``
  const inline = `window[Symbol.for('marginalia.loader')]||function(d,n,k){n=d.createElement('div');n.setAttribute('data-marginalia-loader','');n.setAttribute('role','status');n.title='Dismiss';n.style.cssText=${JSON.stringify(NOTE_STYLE).replace(/"/g, "'")};n.onclick=function(){n.remove()};n.appendChild(d.createElement('span')).textContent='${message.replace(/'/g, "\\'")}';d.documentElement.appendChild(n);(function r(){setTimeout(function(){var s=d.createElement('script');s.src=${JSON.stringify(loader).replace(/"/g, "'")};s.onload=function(){n.remove()};s.onerror=function(){s.remove();r()};d.head.appendChild(s)},Math.min(3e4,2e3*Math.pow(1.5,k++)))})()}(document,null,0)`
  const tag = project !== undefined ? ` data-project="${project.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"` : ''
  return `<script src="${loader}"${tag}></script>\n<script>${inline}</script>`
}
