/**
 * The `early` chunk: the page log's and the steps' recorders (src/browser/early), for a page where
 * no early script installed them (the overlay's tag alone). With the head snippet, the Vite
 * loader or the extension, they already run and overlay.js takes them over without this chunk.
 */
export { installPageLog } from '../../early/page-log.js'
export { installSteps } from '../../early/steps.js'
