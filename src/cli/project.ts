/**
 * One store per project: the default store is found like git finds `.git`. Walking up from the
 * working directory, the first directory with a `.marginalia/` folder wins; else the nearest
 * directory with a `package.json` or `.git`; else the working directory itself.
 */
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory()
  } catch {
    return false
  }
}

function ancestors(start: string): string[] {
  const out: string[] = []
  let dir = path.resolve(start)
  for (;;) {
    out.push(dir)
    const parent = path.dirname(dir)
    if (parent === dir) return out
    dir = parent
  }
}

/** The project directory for `cwd`: nearest `.marginalia/`, else nearest package.json/.git root. */
export function projectRoot(cwd: string = process.cwd()): string {
  const dirs = ancestors(cwd)
  const withStore = dirs.find((d) => isDir(path.join(d, '.marginalia')))
  if (withStore) return withStore
  const withManifest = dirs.find((d) => existsSync(path.join(d, 'package.json')) || existsSync(path.join(d, '.git')))
  return withManifest ?? path.resolve(cwd)
}

/** The default store file for `cwd`: `<project>/.marginalia/store.json`. */
export function defaultStoreFile(cwd: string = process.cwd()): string {
  return path.join(projectRoot(cwd), '.marginalia', 'store.json')
}
