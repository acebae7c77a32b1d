/**
 * The servers the Vite plugin starts, shared by every instance of it in this process: a registry
 * of holds (a dev server restarting takes over the server, even one still starting), and the start
 * itself — in a worker thread running the bundled build (worker.ts), started ahead while
 * Vite loads its config, or in-process when running from the sources.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ServerStart, StartedServer } from './start.js'

/** A server this process started: its addresses, and its close (the HTTP server, then the store). */
export type Running = StartedServer

/** One server this process starts or runs, with the dev servers holding it. */
export interface Entry {
  started: Promise<Running>
  refs: number
  closing?: Promise<void>
}

/**
 * Servers this process started, shared by every plugin instance: when Vite restarts (a config
 * change) it creates the new dev server before closing the old one, so the new instance takes
 * over the running Marginalia server (or the one still starting) instead of finding it busy — and
 * it stays up throughout.
 */
const RUNNING_KEY = Symbol.for('marginalia.vite.servers')
type Registry = Map<string, Entry>
export function registry(): Registry {
  const g = globalThis as { [RUNNING_KEY]?: Registry }
  g[RUNNING_KEY] ??= new Map()
  return g[RUNNING_KEY]
}

/**
 * A hold on the server under `key`, counted at once (so a dev server restarting takes over one
 * still starting): the running one, or a new one started by `start` — after the one closing
 * there, if any, has closed.
 */
export function acquire(key: string, start: () => Promise<Running>): Entry {
  const servers = registry()
  const current = servers.get(key)
  if (current && !current.closing) {
    current.refs++
    return current
  }
  // A close that failed still leaves the port to try.
  const closed = current?.closing?.catch(() => undefined) ?? Promise.resolve()
  const entry: Entry = { started: closed.then(start), refs: 1 }
  servers.set(key, entry)
  entry.started.catch(() => {
    if (servers.get(key) === entry) servers.delete(key)
  })
  return entry
}

/** Lets go of a hold; the last one closes the server (once it has started) and its store. */
export function release(key: string, entry: Entry): Promise<void> {
  entry.refs--
  if (entry.refs > 0) return Promise.resolve()
  entry.closing ??= (async () => {
    try {
      const running = await entry.started.catch(() => undefined)
      if (!running) return
      await running.close()
    } finally {
      const servers = registry()
      if (servers.get(key) === entry) servers.delete(key)
    }
  })()
  return entry.closing
}

/** The bundled server's worker beside this file (dist/integrations/vite/vite-worker.mjs), when there is one. */
function workerFile(): string | undefined {
  const bundled = new URL('./vite-worker.mjs', import.meta.url)
  return bundled.protocol === 'file:' && existsSync(fileURLToPath(bundled)) ? fileURLToPath(bundled) : undefined
}

/**
 * A worker started ahead, its code loading while Vite loads the config and the other plugins; taken
 * by the next start. Unreferenced: an idle one never keeps the process alive.
 */
let spare: Worker | undefined

export function prewarm(): void {
  const file = spare ? undefined : workerFile()
  if (!file) return
  spare = new Worker(file)
  spare.unref()
  spare.on('error', () => (spare = undefined))
}

/**
 * Start the server: in a worker thread running the bundled build, so neither loading its code nor
 * starting it takes time from the dev server starting on the main thread; from the sources (no
 * bundle), here.
 */
export async function startServer(options: ServerStart, log: (message: string) => void, keepAlive = true): Promise<Running> {
  const file = workerFile()
  if (file) {
    const worker = spare ?? new Worker(file)
    spare = undefined
    return startInWorker(worker, options, log, keepAlive)
  }
  const { startServer: here } = await import('./start.js')
  return here(options, log)
}

type WorkerMessage = { type: 'log'; message: string } | { type: 'started'; url: string; mcpUrl: string } | { type: 'failed'; message: string } | { type: 'closed' }

function startInWorker(worker: Worker, options: ServerStart, log: (message: string) => void, keepAlive: boolean): Promise<Running> {
  return new Promise<Running>((resolve, reject) => {
    // Referenced while it serves: the server keeps the process alive, as one started here would
    // (unless `keepAlive` is false: it then lives exactly as long as the process, e.g. Next.js's).
    if (keepAlive) worker.ref()
    else worker.unref()
    let started = false
    let closed: (() => void) | undefined
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'log') log(m.message)
      else if (m.type === 'failed') reject(new Error(m.message))
      else if (m.type === 'closed') closed?.()
      else if (m.type === 'started') {
        started = true
        resolve({
          url: m.url,
          mcpUrl: m.mcpUrl,
          close: () =>
            new Promise<void>((done) => {
              closed = done
              worker.once('exit', () => done())
              worker.postMessage('close')
            }),
        })
      }
    })
    worker.on('error', (e) => (started ? log(`the server stopped: ${e.message}`) : reject(e)))
    worker.on('exit', (code) => {
      if (!started) reject(new Error(`the server's worker exited (${code}) before it started`))
    })
    worker.postMessage({ type: 'start', options })
  })
}

