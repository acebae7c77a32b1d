/**
 * Size limits for every free-text field. Comments and messages are generous; labels are not.
 * Plain constants in a module of their own (no zod), so the browser overlay trims to the very
 * same limits without bundling the schemas.
 */
export const LIMITS = {
  id: 128,
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
  file: 1_000,
  component: 200,
} as const
