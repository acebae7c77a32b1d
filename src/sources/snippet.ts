/**
 * A few lines around a source location for the agent (get_annotation) — only for files inside the
 * project root (also after symlinks), bounded in size.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { isOutsidePath, type SourceLocation } from '../store/source-location.js'

const MAX_FILE_BYTES = 2 * 1024 * 1024
const MAX_LINE_CHARS = 240

/**
 * Up to `radius` lines either side of the location, numbered, for the agent. Undefined unless the
 * file is inside the root (also after symlinks), a regular file under 2 MiB, and the line exists.
 */
export function readSnippet(source: SourceLocation | undefined, root: string | undefined, radius = 4): string | undefined {
  if (!root || !source?.file || !source.line || source.outside || isOutsidePath(source.file)) return undefined
  try {
    const realRoot = realpathSync(root)
    const file = realpathSync(path.resolve(realRoot, source.file))
    const rel = path.relative(realRoot, file)
    if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).includes('node_modules')) return undefined
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
    return out.join('\n')
  } catch {
    return undefined
  }
}
