/**
 * How each chunk of the overlay is loaded. As written here: a plain dynamic import, which a bundle
 * without code splitting (the browser extension's page script, a test that bundles the sources)
 * puts inline. scripts/build-overlay.mjs replaces this module in overlay.js with one that imports
 * the content-hashed chunk files (`chunks/<name>-<HASH>.js`) from `base` (a folder URL).
 */
import type * as Annotate from './annotate.js'
import type * as Early from './early.js'
import type * as Extras from './extras.js'
import type * as Prompts from './prompts.js'
import type * as Sender from './sender.js'
import type * as Ui from './ui.js'

export interface Chunks {
  annotate: typeof Annotate
  early: typeof Early
  extras: typeof Extras
  ui: typeof Ui
  prompts: typeof Prompts
  sender: typeof Sender
}

/**
 * Which chunk files this build loads: scripts/build-overlay.mjs puts a fingerprint of their
 * content-hashed names here (a bundle that holds the chunks inline keeps this one).
 */
export const CHUNKS_BUILD = 'inline'

/** Each chunk's loader; `attempt` (0 first) makes a retry's URL differ, as a browser remembers a module that failed to load. */
export type ChunkLoaders = { readonly [K in keyof Chunks]: (attempt: number) => Promise<Chunks[K]> }

export function chunkLoaders(base: string | undefined): ChunkLoaders {
  void base // the chunks are inside this bundle
  return { annotate: () => import('./annotate.js'), early: () => import('./early.js'), extras: () => import('./extras.js'), ui: () => import('./ui.js'), prompts: () => import('./prompts.js'), sender: () => import('./sender.js') }
}
