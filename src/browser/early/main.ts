/**
 * `early.js`: the page log's recorder alone, to run before any script of the page — the Vite
 * plugin's loader inlines it first in <head>, `loader.js` starts with it, and the browser
 * extension runs it in the page's main world at document_start. The overlay takes the log over
 * when it mounts (the contract is in ./page-log.ts).
 */
import { installPageLog, pageLogEnabled } from './page-log.js'

if (typeof window !== 'undefined' && pageLogEnabled()) installPageLog(window)
