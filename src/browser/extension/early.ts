/**
 * The page log from the page's first moment: installed before the page's first script runs, under
 * `Symbol.for('marginalia.pageLog')`, so the overlay finds this same log when it mounts.
 * Requests to the server go through the extension, never the page's `fetch`: nothing to ignore.
 */
import { installPageLog } from '../overlay/capture/page-log.js'

installPageLog(window, () => false)
