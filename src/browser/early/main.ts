/**
 * `early.js`: the page log's recorder and the steps' recorder, to run before any script of the
 * page — the Vite plugin's loader inlines it first in <head>, `loader.js` starts with it, and the
 * browser extension runs it in the page's main world at document_start. The overlay takes both
 * over when it mounts (the contracts are in ./page-log.ts and ./steps.ts).
 */
import { installPageLog, pageLogEnabled } from './page-log.js'
import { installSteps } from './steps.js'
import { stepsEnabled } from './steps-settings.js'

if (typeof window !== 'undefined' && pageLogEnabled()) installPageLog(window)
if (typeof window !== 'undefined' && stepsEnabled()) installSteps(window)
