/**
 * The overlay's chunks, fetched on first use: overlay.js itself holds what a page needs before the
 * person annotates (the dock, pins, the live connection, window.Marginalia); annotate mode and the
 * panels (./annotate.ts), their looks (./ui.ts) and what Send needs (./extras.ts) are chunks. Each
 * chunk is fetched once (a failed fetch is tried again on next use). The overlay fetches
 * {@link INTENDED} when the person shows the intent to annotate (overlay.ts), or, with
 * `data-prefetch="idle"`, {@link prefetchWhenIdle} fetches them after the page's load. A browser
 * that has used annotate mode's chunks of this very build on this site has them in its cache
 * ({@link rememberUse}): there they are fetched when the page is idle, at no cost on the wire, so
 * the press finds them ready.
 */
import type { Settings } from '../page/settings.js'
import { CHUNKS_BUILD, chunkLoaders, type ChunkLoaders, type Chunks } from './table.js'

/** Where the chunks may be, in order (each a loader table); the first that answers is kept. */
let places: ChunkLoaders[] = []
/** The first place looked in: part of what the browser's cache is keyed by. */
let firstBase = ''

/** Where this site's storage remembers which build's annotate chunks its browser has used (and so has cached). */
const USED_KEY = 'marginalia:chunks-used'
const usedMark = (): string => `${CHUNKS_BUILD} ${firstBase}`
const loading = new Map<keyof Chunks, Promise<Chunks[keyof Chunks]>>()
const failures = new Map<keyof Chunks, number>()

/**
 * Where the chunk files are: the folder overlay.js came from, then the server's (overlay.js copied
 * into the page's own origin without its chunks). Never called: the chunks are inside this bundle.
 */
export function setChunkBases(bases: readonly string[]): void {
  places = [...new Set(bases)].map((base) => chunkLoaders(base))
  firstBase = bases[0] ?? ''
}

/** Annotate mode's chunks came to use on this page: remembered for later pages of the site (written once per build). */
export function rememberUse(settings: Settings): void {
  if (settings.get(USED_KEY) !== usedMark()) settings.set(USED_KEY, usedMark())
}

/** This browser used annotate mode's chunks of this build here before: they are in its cache. */
export function usedBefore(settings: Settings): boolean {
  return settings.get(USED_KEY) === usedMark()
}

async function fetchChunk<K extends keyof Chunks>(name: K): Promise<Chunks[K]> {
  const attempt = failures.get(name) ?? 0
  const tables = places.length > 0 ? places : [chunkLoaders(undefined)]
  let error: unknown
  for (const [i, table] of tables.entries()) {
    try {
      const chunk = await table[name](attempt)
      // The place that answered comes first from now on.
      if (i > 0) places = [table, ...tables.filter((t) => t !== table)]
      return chunk
    } catch (e) {
      error = e
    }
  }
  failures.set(name, attempt + 1)
  throw error
}

export function load<K extends keyof Chunks>(name: K): Promise<Chunks[K]> {
  const known = loading.get(name) as Promise<Chunks[K]> | undefined
  if (known) return known
  const started = fetchChunk(name)
  loading.set(name, started)
  started.catch(() => loading.delete(name))
  return started
}

/** What annotate mode and the panels need at once: fetched on intent (and, with the idle prefetch, after load). */
export const INTENDED: readonly (keyof Chunks)[] = ['annotate', 'ui']

/** What the idle prefetch fetches: what Annotate, the panels and Send need, not the prompts most pages never show. */
const PREFETCHED: readonly (keyof Chunks)[] = [...INTENDED, 'extras']

/**
 * `names` (by default what Annotate, the panels and Send need), once the page has loaded and the
 * browser is idle (at most 5 s after load), then `fetched` (which puts what came to use); stopped
 * by `signal`.
 */
export function prefetchWhenIdle(signal: AbortSignal, fetched?: () => void, names: readonly (keyof Chunks)[] = PREFETCHED): void {
  const fetchAll = (): void => {
    if (signal.aborted) return
    for (const name of names) load(name).catch(() => {}) // fetched again on first use
    fetched?.()
  }
  const whenIdle = (): void => {
    if (signal.aborted) return
    if (typeof requestIdleCallback === 'function') {
      const id = requestIdleCallback(fetchAll, { timeout: 5_000 })
      signal.addEventListener('abort', () => cancelIdleCallback(id), { once: true })
    } else {
      const id = setTimeout(fetchAll, 1_000)
      signal.addEventListener('abort', () => clearTimeout(id), { once: true })
    }
  }
  if (document.readyState === 'complete') whenIdle()
  else window.addEventListener('load', whenIdle, { once: true, signal })
}

/**
 * The annotation as sent, with its source location and extras (./extras.ts); when the chunk cannot
 * be fetched (the server went away), the annotation as written, so it still goes into the outbox.
 */
export function complete(...args: Parameters<Chunks['extras']['complete']>): ReturnType<Chunks['extras']['complete']> {
  return load('extras').then(
    (m) => m.complete(...args),
    () => ({ body: args[0] }),
  )
}
