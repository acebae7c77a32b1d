/**
 * Where an annotation's source location points, as the server sees it: a preview build's short
 * ids resolved through its `marginalia-sources.json` manifest, and absolute paths inside the
 * project root made project-relative.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SourceLocation, SourcePoint } from '../store/source-location.js'

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
