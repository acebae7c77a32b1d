/**
 * The store's field limits (src/store/model.ts LIMITS), repeated here so the browser bundle does
 * not pull in zod; a test checks they stay equal. The overlay trims to them before sending.
 */
export const LIMITS = {
  url: 4096,
  name: 200,
  comment: 10_000,
  message: 10_000,
  selector: 2_000,
  path: 4_000,
  tag: 100,
  text: 2_000,
  html: 5_000,
  selectedText: 5_000,
} as const

/** How much of an element's text the overlay sends as its snippet. */
export const SNIPPET_CHARS = 200
