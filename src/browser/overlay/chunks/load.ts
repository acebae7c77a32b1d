/**
 * The overlay's chunks, fetched on first use: overlay.js itself holds what a page needs before the
 * person annotates (the dock, pins, the live connection, window.Marginalia); annotate mode and the
 * panels (./annotate.ts), their looks (./ui.ts) and what Send needs (./extras.ts) are chunks. Each
 * chunk is fetched once (a failed fetch is tried again on next use). The overlay fetches
 * {@link INTENDED} when the person shows the intent to annotate (overlay.ts), or, with
 * `data-prefetch="idle"`, {@link prefetchWhenIdle} fetches them after the page's load.
 */
import { chunkLoaders, type ChunkLoaders, type Chunks } from './table.js'

/** Where the chunks may be, in order (each a loader table); the first that answers is kept. */
let places: ChunkLoaders[] = []
const loading = new Map<keyof Chunks, Promise<Chunks[keyof Chunks]>>()
const failures = new Map<keyof Chunks, number>()

/**
 * Where the chunk files are: the folder overlay.js came from, then the server's (overlay.js copied
 * into the page's own origin without its chunks). Never called: the chunks are inside this bundle.
 */
export function setChunkBases(bases: readonly string[]): void {
  places = [...new Set(bases)].map((base) => chunkLoaders(base))
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
 * Those chunks, once the page has loaded and the browser is idle (at most 5 s after load), then
 * `fetched` (which puts what came to use); stopped by `signal`.
 */
export function prefetchWhenIdle(signal: AbortSignal, fetched: () => void): void {
  const fetchAll = (): void => {
    if (signal.aborted) return
    for (const name of PREFETCHED) load(name).catch(() => {}) // fetched again on first use
    fetched()
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
