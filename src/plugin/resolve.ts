/**
 * The server's side of source locations (issue 19): resolve a preview build's short ids through
 * its `marginalia-sources.json` manifest, link a location to the person's editor, and read a few
 * lines around it for the agent — only for files inside the project root, bounded in size.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { isOutsidePath, type SourceLocation, type SourcePoint } from '../store/source-location.js'

/** What a server knows about the app's source: its root, a preview build's manifest, the editor to link to. */
export interface SourceOptions {
  /** The project root the annotations' paths are relative to. Without it nothing is read or linked. */
  root?: string
  /** id → file:line:column (a `marginalia-sources.json` from an 'ids' build). */
  manifest?: Readonly<Record<string, string>>
  /** Editor links: 'vscode' (default with a root), 'cursor', 'idea', or 'none'. */
  editor?: string
}

export const EDITORS = ['vscode', 'cursor', 'windsurf', 'idea', 'none'] as const

/** Read and check a manifest file; a clear error naming the fix when it is not one. */
export function loadManifest(file: string): Record<string, string> {
  let data: unknown
  try {
    data = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new Error(`--sources ${file}: cannot read it as JSON (${e instanceof Error ? e.message : String(e)}); pass the marginalia-sources.json an 'ids' build wrote`)
  }
  const sources = (data as { sources?: unknown }).sources
  if (typeof sources !== 'object' || sources === null || Object.values(sources).some((v) => typeof v !== 'string')) {
    throw new Error(`--sources ${file}: expected { "version": 1, "sources": { "<id>": "<file>:<line>:<column>" } }`)
  }
  return sources as Record<string, string>
}

function point(loc: string): SourcePoint | undefined {
  const m = /^(.+?):(\d+)(?::(\d+))?$/.exec(loc)
  if (!m) return undefined
  return { file: m[1]!, line: Number(m[2]), ...(m[3] ? { column: Number(m[3]) } : {}) }
}

/** A source found by id (`file: '#k3f9'`, via 'manifest') replaced by its manifest entry; others unchanged. */
export function resolveSource(source: SourceLocation | undefined, manifest: Readonly<Record<string, string>> | undefined): SourceLocation | undefined {
  if (!source || !manifest || source.via !== 'manifest' || !source.file?.startsWith('#')) return source
  const found = Object.hasOwn(manifest, source.file.slice(1)) ? point(manifest[source.file.slice(1)]!) : undefined
  return found ? { ...source, ...found } : source
}

/** A path the page named absolutely or as a file:// URL (a bundler's source map), relative to `root` when it lies inside it. */
function insideRoot(file: string, root: string): string {
  let abs = file
  if (file.startsWith('file://')) {
    try {
      abs = fileURLToPath(file)
    } catch {
      return file
    }
  }
  if (!path.isAbsolute(abs)) return file
  const rel = path.relative(root, abs)
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? file : rel.split(path.sep).join('/')
}

/** A source whose file (or call site) the page gave as an absolute path inside the project root, made project-relative. */
export function relativeSource(source: SourceLocation | undefined, root: string | undefined): SourceLocation | undefined {
  if (!source || !root) return source
  const out: SourceLocation = { ...source }
  if (source.file !== undefined) out.file = insideRoot(source.file, root)
  if (source.callSite) out.callSite = { ...source.callSite, file: insideRoot(source.callSite.file, root) }
  return out
}

/** `vscode://file/<abs>:<line>:<col>` (or the chosen editor's scheme) for a file inside the root. */
export function editorLink(source: SourceLocation, options: SourceOptions): string | undefined {
  const editor = options.editor ?? 'vscode'
  if (!options.root || editor === 'none' || !source.file || isOutsidePath(source.file)) return undefined
  const abs = path.resolve(options.root, source.file).split(path.sep).join('/')
  const at = `${abs}${source.line ? `:${source.line}${source.column ? `:${source.column}` : ''}` : ''}`
  if (editor === 'idea') return `idea://open?file=${encodeURIComponent(abs)}${source.line ? `&line=${source.line}` : ''}`
  return `${editor}://file${abs.startsWith('/') ? '' : '/'}${encodeURI(at)}`
}

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

/** What /health tells the inbox so it can link locations to the editor: the root and the editor, when known. */
export function editorBase(options: SourceOptions | undefined): { sourceRoot?: string; editor?: string } {
  if (!options?.root || options.editor === 'none') return {}
  return { sourceRoot: path.resolve(options.root).split(path.sep).join('/'), editor: options.editor ?? 'vscode' }
}

/** The project root a server was given for a store, so get_annotation can show the lines around a location. */
const roots = new WeakMap<object, string>()
export function registerSourceRoot(store: object, root: string): void {
  roots.set(store, path.resolve(root))
}
export function sourceRootOf(store: object): string | undefined {
  return roots.get(store)
}
