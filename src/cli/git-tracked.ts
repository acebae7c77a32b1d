/**
 * Whether git tracks files in the store's folder. A committed `.marginalia/` carries a person's
 * annotations (page titles, comments, screenshots) into every clone, and lets a repository plant
 * files and links where the store writes. `doctor` and the start-up log of `serve` and `mcp` warn;
 * without git, or outside a repository, nothing is said.
 */
import { execFile, execFileSync } from 'node:child_process'
import path from 'node:path'

export interface GitWarning {
  detail: string
  fix: string
}

/** How to ask git which files it tracks in the folder of the store file `file` (git prints them NUL-separated). */
function lsFiles(file: string): { args: string[]; options: { cwd: string; encoding: 'utf8'; timeout: number } } {
  const folder = path.dirname(path.resolve(file))
  return { args: ['ls-files', '-z', '--', path.basename(folder)], options: { cwd: path.dirname(folder), encoding: 'utf8', timeout: 5_000 } }
}

const paths = (out: string): string[] => out.split('\0').filter((f) => f !== '')

/** The files git tracks in the folder of the store file `file` (paths as git prints them); [] without git. */
function trackedStoreFiles(file: string): string[] {
  const { args, options } = lsFiles(file)
  try {
    return paths(execFileSync('git', args, { ...options, stdio: ['ignore', 'pipe', 'ignore'] }))
  } catch {
    return [] // no git, not a repository, or the folder's parent does not exist
  }
}

/** The warning for the files git tracks in the store's folder, or undefined when it tracks none. */
function warningFor(file: string, tracked: readonly string[]): GitWarning | undefined {
  if (tracked.length === 0) return undefined
  const name = path.basename(path.dirname(path.resolve(file)))
  return {
    detail: `${name}/ is tracked by git (${tracked.length === 1 ? '1 file' : `${tracked.length} files`}, e.g. ${tracked[0]}): every clone carries your annotations, and a repository can plant files or links where the store writes`,
    fix: `add ${name}/ to .gitignore and run git rm -r --cached ${name}`,
  }
}

/** The warning for the store file `file`, or undefined when git tracks nothing in its folder. */
export function gitTrackedWarning(file: string): GitWarning | undefined {
  return warningFor(file, trackedStoreFiles(file))
}

/**
 * Log the warning (stderr) when git tracks the store's folder. git runs beside the caller (a
 * server answers meanwhile); the promise settles once it has been asked, never rejecting.
 */
export function warnIfTrackedByGit(file: string, log: (message: string) => void): Promise<void> {
  const { args, options } = lsFiles(file)
  return new Promise((resolve) => {
    const child = execFile('git', args, options, (error, stdout) => {
      // An error: no git, not a repository, or the folder's parent does not exist.
      const warning = error ? undefined : warningFor(file, paths(stdout))
      if (warning) log(`warning: ${warning.detail}. Fix: ${warning.fix}.`)
      resolve()
    })
    child.stdin?.end()
  })
}
