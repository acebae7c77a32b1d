import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package root, wherever this module runs from: src/ (tests), dist/ (the library) or a
 * chunk of the bundled CLI (dist/chunks/): the nearest directory above with a package.json.
 */
export const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`marginalia: no package.json above ${from}`)
  }
}

const pkg = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { name: string; version: string }

export const PACKAGE_NAME = pkg.name
export const VERSION = pkg.version
