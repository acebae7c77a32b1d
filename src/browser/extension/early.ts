/**
 * The page log from the page's first moment: the early recorder (src/browser/early/main.ts, the
 * same code as the Vite loader's and `loader.js`'s) runs before the page's first script and
 * installs the log under `Symbol.for('marginalia.pageLog')`, so the overlay takes this same log
 * over when it mounts (the contract is in ../early/page-log.ts). The overlay registers its server
 * with the log's `ignore`; its requests go through the extension's service worker anyway, never
 * the page's `fetch` or XHR, so the page's network never sees them.
 */
import '../early/main.js'
