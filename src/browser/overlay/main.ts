/**
 * The Marginalia overlay: one script tag in any page —
 *
 *   <script src="http://127.0.0.1:4848/overlay.js" defer></script>
 *
 * — and the person can point at an element (or select text), write what is wrong, and watch the
 * agent answer. It talks to the server the script came from (REST + Server-Sent Events), lives
 * in a shadow root (the page's CSS and ours never meet), and adds one global, `window.Marginalia`.
 */
import { boot } from './boot.js'
import { installRecorders } from './recorders.js'

if (typeof window !== 'undefined' && typeof document !== 'undefined') boot(installRecorders, 'overlay.js')
