import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

/** Tests that spawn processes run the built `dist/` (the bundled CLI, the overlay and inbox assets, the browser extension); rebuild when missing or stale. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..')
  const built = ['index.js', 'index.cjs', 'integrations/vite/index.js', 'integrations/vite/index.cjs', 'marginalia.mjs', 'overlay/overlay.js', 'overlay/inbox.js', 'overlay/index.html', 'extension/chromium/manifest.json', 'extension/firefox/manifest.json'].map((f) => path.join(root, 'dist', f))
  const newestSource = newest(path.join(root, 'src'))
  if (built.every((f) => existsSync(f) && statSync(f).mtimeMs >= newestSource)) return
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
  execFileSync(process.execPath, [path.join(root, 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'inherit' })
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-overlay.mjs')], { cwd: root, stdio: 'inherit' })
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-extension.mjs')], { cwd: root, stdio: 'inherit' })
}

function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return latest
}
