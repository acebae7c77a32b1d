/** Marginalia's public embedding API. */
export * from './store/index.js'
export * from './http/index.js'
