/**
 * The server's side of source locations: resolving a preview build's ids, project-relative
 * paths, editor links and the lines around a location. Build plugins (src/integrations) mark the
 * elements; this room reads what they wrote.
 */
export { EDITORS, type SourceOptions } from './options.js'
export { loadManifest } from './resolve.js'
