/**
 * What the Vite plugin loads to start a server, as one module: the build bundles it into
 * dist/vite-server.mjs, sharing chunks with the `marginalia` command (with the built-in tools'
 * schemas precomputed), which loads several times faster than the same modules one by one.
 */
export { openStore } from './store/open.js'
export { startHttpServer } from './http/app.js'
