/**
 * The Vite plugin's server in a worker thread (bundled as dist/integrations/vite/vite-worker.mjs): loading the
 * server's code and starting it then take no time from the dev server's own start on the main
 * thread. The plugin may start the worker early (while Vite loads its config), so the code is
 * loaded by the time it asks for the server. Messages from the plugin: `{ type: 'start', options }`,
 * then `'close'`. To it: `{ type: 'log', message }`, `{ type: 'started', url, mcpUrl }` or
 * `{ type: 'failed', message }`, and `{ type: 'closed' }` once closed.
 */
import { parentPort } from 'node:worker_threads'
import { startServer, type ServerStart, type StartedServer } from './start.js'

const port = parentPort
let server: Promise<StartedServer | undefined> | undefined
port?.on('message', (message: { type: 'start'; options: ServerStart } | 'close') => {
  if (message === 'close') {
    void (server ?? Promise.resolve(undefined))
      .then((s) => s?.close())
      .catch((e: unknown) => port.postMessage({ type: 'log', message: `closing the server failed: ${e instanceof Error ? e.message : String(e)}` }))
      .finally(() => {
        port.postMessage({ type: 'closed' })
        port.close()
      })
    return
  }
  if (message.type !== 'start' || server) return
  server = startServer(message.options, (m) => port.postMessage({ type: 'log', message: m })).then(
    (s) => {
      port.postMessage({ type: 'started', url: s.url, mcpUrl: s.mcpUrl })
      return s
    },
    (e: unknown) => {
      port.postMessage({ type: 'failed', message: e instanceof Error ? e.message : String(e) })
      port.close()
      return undefined
    },
  )
})
