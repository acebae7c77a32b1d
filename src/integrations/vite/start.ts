/**
 * The server a Vite plugin starts: the store opened and the HTTP server started on it, handed
 * back as its addresses and a close. The build bundles this module with a worker around it
 * (`worker.ts` → dist/integrations/vite/vite-worker.mjs), so the plugin can run it off the main
 * thread the dev server starts on.
 */
import { startHttpServer } from '../../http/app.js'
import path from 'node:path'
import { openStore } from '../../store/open.js'
import { openToldLedger } from '../../store/told.js'

export interface ServerStart {
  /** The store file. */
  file: string
  port: number
  host: string
  token?: string
  /** The project root: source paths are relative to it. */
  root: string
}

export interface StartedServer {
  url: string
  mcpUrl: string
  /** Close the HTTP server, then the store. */
  close(): Promise<void>
}

export async function startServer(options: ServerStart, log: (message: string) => void): Promise<StartedServer> {
  const store = await openStore({ file: options.file })
  try {
    const http = await startHttpServer(store, { port: options.port, host: options.host, ...(options.token !== undefined ? { token: options.token } : {}), storeLocation: options.file, ...(options.file.includes('://') ? {} : { told: openToldLedger(path.dirname(options.file)) }), log, sources: { root: options.root } })
    return {
      url: http.url,
      mcpUrl: http.mcpUrl,
      close: async () => {
        try {
          await http.close()
        } finally {
          await store.close()
        }
      },
    }
  } catch (e) {
    await store.close()
    throw e
  }
}
