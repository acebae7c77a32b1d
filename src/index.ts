/** Marginalia's public embedding API. */
export * from './store/index.js'
