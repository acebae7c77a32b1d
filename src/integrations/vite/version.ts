/** Which Vite the plugin runs on, and the refusal when it is older than the plugin supports. */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { DEFAULT_PORT } from '../../http/defaults.js'

/** The oldest Vite the plugin runs on (it uses the hook shapes of Vite 5: `transformIndexHtml.order`, `apply`). */
export const MIN_VITE_MAJOR = 5

/**
 * The version of the Vite running the plugin: what Vite says of itself (`this.meta.viteVersion`,
 * Vite ≥ 7), else the version of the `vite` package the project at `root` resolves. Undefined
 * when neither says.
 */
export function runningViteVersion(meta: { viteVersion?: unknown } | undefined, root: string): string | undefined {
  if (typeof meta?.viteVersion === 'string') return meta.viteVersion
  try {
    const file = createRequire(path.join(root, 'package.json')).resolve('vite/package.json')
    const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version
    return typeof version === 'string' ? version : undefined
  } catch {
    return undefined
  }
}

/** Why the plugin cannot run on Vite `version`, or undefined when it can (or the version is unknown). */
export function viteTooOld(version: string | undefined): string | undefined {
  const major = version === undefined ? NaN : Number(/^(\d+)\./.exec(version)?.[1])
  if (!(major < MIN_VITE_MAJOR)) return undefined
  return `marginalia/vite needs Vite ${MIN_VITE_MAJOR} or newer; this project runs Vite ${version}. Upgrade Vite (npm i -D vite@latest), or remove marginalia() from the Vite config and use the script tag instead: <script src="http://127.0.0.1:${DEFAULT_PORT}/overlay.js" defer></script> in your page (dev only) with \`npx marginalia serve\` running beside the dev server (see docs/guide/frameworks.md).`
}
