// `npm start`: build only when a source is newer than the built CLI (a fresh clone has no dist/).
import { execSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const mtime = (p) => {
  try {
    return statSync(p).mtimeMs
  } catch {
    return -1
  }
}
function newest(p) {
  const s = statSync(p, { throwIfNoEntry: false })
  if (!s) return -1
  if (!s.isDirectory()) return s.mtimeMs
  return readdirSync(p).reduce((m, name) => Math.max(m, newest(path.join(p, name))), s.mtimeMs)
}
const inputs = ['src', 'scripts/bundle.mjs', 'scripts/build-overlay.mjs', 'scripts/build-extension.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']
const sources = Math.max(...inputs.map((p) => newest(path.join(root, p))))
const built = Math.min(mtime(path.join(root, 'dist/marginalia.mjs')), mtime(path.join(root, 'dist/overlay/overlay.js')), mtime(path.join(root, 'dist/index.cjs')))
if (built < sources) {
  process.stderr.write(built < 0 ? 'marginalia: building (first start)\n' : 'marginalia: sources changed since the last build; rebuilding\n')
  execSync('npm run build', { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
}
