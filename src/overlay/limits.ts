/** The store's own field limits (a zod-free module): the overlay trims to them before sending. */
export { LIMITS } from '../store/vocabulary.js'

/** How much of an element's text the overlay sends as its snippet. */
export const SNIPPET_CHARS = 200
