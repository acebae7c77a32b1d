/**
 * A few lines around a source location for the agent (get_annotation) — only from files inside the
 * project root (also after symlinks), never from a dot-file or a file under a dot-folder (`.env`,
 * `.git/config`, `.npmrc`), from `node_modules`, or from a file git ignores; bounded in size. When a
 * file is refused the agent is told why, so it does not guess at a missing snippet.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { isOutsidePath, type SourceLocation } from '../store/source-location.js'

const MAX_FILE_BYTES = 2 * 1024 * 1024
const MAX_LINE_CHARS = 240

/** The lines read, or why none were: what get_annotation passes on to the agent. */
export type Snippet = { lines: string; withheld?: undefined } | { lines?: undefined; withheld: string }

/** How long a `git check-ignore` answer is reused (a file's ignored-ness rarely changes while a server runs). */
const IGNORE_CACHE_MS = 30_000
const IGNORE_CACHE_MAX = 1_000
const ignoreCache = new Map<string, { ignored: boolean; at: number }>()

function checkIgnore(root: string, file: string, now: number): boolean {
  const key = `${root}\0${file}`
  const hit = ignoreCache.get(key)
  if (hit && now - hit.at < IGNORE_CACHE_MS) return hit.ignored
  const run = spawnSync('git', ['check-ignore', '-q', '--', file], { cwd: root, stdio: 'ignore', timeout: 2_000 })
  const ignored = run.status === 0
  if (ignoreCache.size >= IGNORE_CACHE_MAX) ignoreCache.clear()
  ignoreCache.set(key, { ignored, at: now })
  return ignored
}

/**
 * Whether git ignores `rel` in the repository holding `root` (`git check-ignore`, cached). Outside
 * a repository, or without git, nothing is ignored; nor when the root itself is ignored (a copy
 * inside another repository's ignored folder: that repository's rules are not the project's).
 */
function isGitIgnored(root: string, rel: string, now = Date.now()): boolean {
  if (checkIgnore(root, path.resolve(root), now)) return false
  return checkIgnore(root, rel, now)
}

/** The first path segment that makes a file private to the machine: a dot-file or dot-folder, or node_modules. */
function privateSegment(rel: string): string | undefined {
  return rel.split(/[\\/]/).find((s) => (s.startsWith('.') && s !== '.' && s !== '..') || s === 'node_modules')
}

/**
 * Up to `radius` lines either side of the location, numbered, for the agent; or why they are
 * withheld (a dot-file, node_modules, a git-ignored file); undefined when there is nothing to read
 * (no root, no line, a file outside the root, not a regular file under 2 MiB, a line past the end).
 */
export function sourceSnippet(source: SourceLocation | undefined, root: string | undefined, radius = 4): Snippet | undefined {
  if (!root || !source?.file || !source.line || source.outside || isOutsidePath(source.file)) return undefined
  try {
    const realRoot = realpathSync(root)
    const named = path.relative(realRoot, path.resolve(realRoot, source.file))
    const file = realpathSync(path.resolve(realRoot, source.file))
    const rel = path.relative(realRoot, file)
    if (rel.startsWith('..') || path.isAbsolute(rel) || named.startsWith('..') || path.isAbsolute(named)) return undefined
    const secret = privateSegment(named) ?? privateSegment(rel)
    if (secret !== undefined) {
      return { withheld: secret === 'node_modules' ? 'source lines are not read from node_modules' : `source lines are not read from dot-files or dot-folders (${secret}): they often hold secrets` }
    }
    if (isGitIgnored(realRoot, rel)) return { withheld: 'source lines are not read from files git ignores: they often hold secrets or build output' }
    const stat = statSync(file)
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return undefined
    const lines = readFileSync(file, 'utf8').split('\n')
    if (source.line > lines.length) return undefined
    const from = Math.max(1, source.line - radius)
    const to = Math.min(lines.length, source.line + radius)
    const width = String(to).length
    const out: string[] = []
    for (let n = from; n <= to; n++) {
      const text = lines[n - 1]!.replace(/\r$/, '')
      out.push(`${n === source.line ? '>' : ' '} ${String(n).padStart(width)} | ${text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text}`)
    }
    return { lines: out.join('\n') }
  } catch {
    return undefined
  }
}

/** The numbered lines around the location, or undefined when there are none to show (see `sourceSnippet`). */
export function readSnippet(source: SourceLocation | undefined, root: string | undefined, radius = 4): string | undefined {
  return sourceSnippet(source, root, radius)?.lines
}
