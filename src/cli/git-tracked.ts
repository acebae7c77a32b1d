/**
 * Whether git tracks files in the store's folder. A committed `.marginalia/` carries a person's
 * annotations (page titles, comments, screenshots) into every clone, and lets a repository plant
 * files and links where the store writes. `doctor` and the start-up log of `serve` and `mcp` warn;
 * without git, or outside a repository, nothing is said.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'

export interface GitWarning {
  detail: string
  fix: string
}

/** The files git tracks in the folder of the store file `file` (paths as git prints them); [] without git. */
function trackedStoreFiles(file: string): string[] {
  const folder = path.dirname(path.resolve(file))
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--', path.basename(folder)], { cwd: path.dirname(folder), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })
    return out.split('\0').filter((f) => f !== '')
  } catch {
    return [] // no git, not a repository, or the folder's parent does not exist
  }
}

/** The warning for the store file `file`, or undefined when git tracks nothing in its folder. */
export function gitTrackedWarning(file: string): GitWarning | undefined {
  const tracked = trackedStoreFiles(file)
  if (tracked.length === 0) return undefined
  const name = path.basename(path.dirname(path.resolve(file)))
  return {
    detail: `${name}/ is tracked by git (${tracked.length === 1 ? '1 file' : `${tracked.length} files`}, e.g. ${tracked[0]}): every clone carries your annotations, and a repository can plant files or links where the store writes`,
    fix: `add ${name}/ to .gitignore and run git rm -r --cached ${name}`,
  }
}

/** Log the warning (stderr) when git tracks the store's folder. */
export function warnIfTrackedByGit(file: string, log: (message: string) => void): void {
  const warning = gitTrackedWarning(file)
  if (warning) log(`warning: ${warning.detail}. Fix: ${warning.fix}.`)
}
