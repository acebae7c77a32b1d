/** Vite for a test project: a config and a dev server that stay on loopback and do nothing the test did not ask for. */
import path from 'node:path'
import { createLogger, createServer, type InlineConfig, type PluginOption, type ViteDevServer } from 'vite'
import type { Cleanups } from './cleanup.js'

export interface ViteTestOptions {
  /** Collects what Vite prints (info; warnings and errors prefixed); without it Vite prints nothing. */
  logs?: string[]
  /** Response headers of the dev server. */
  headers?: Record<string, string>
}

/** The project at `root` on 127.0.0.1, any free port, no HMR, no file watching, no dependency scan, its cache inside the project. */
export function viteConfig(root: string, plugins: PluginOption[], options: ViteTestOptions = {}): InlineConfig {
  const { logs } = options
  const logger = createLogger(logs ? 'info' : 'silent', { allowClearScreen: false })
  if (logs) {
    logger.info = (m) => void logs.push(m)
    logger.warn = (m) => void logs.push(`warn: ${m}`)
    logger.error = (m) => void logs.push(`error: ${m}`)
  }
  return {
    root,
    configFile: false,
    customLogger: logger,
    clearScreen: false,
    cacheDir: path.join(root, '.vite-cache'),
    plugins,
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null, ...(options.headers ? { headers: options.headers } : {}) },
    optimizeDeps: { noDiscovery: true, include: [] },
  }
}

/** A listening dev server on {@link viteConfig}, closed by `cleanups`. */
export async function startVite(cleanups: Cleanups, root: string, plugins: PluginOption[], options: ViteTestOptions = {}): Promise<ViteDevServer> {
  const vite = await createServer(viteConfig(root, plugins, options))
  cleanups.push(() => vite.close())
  await vite.listen()
  return vite
}
