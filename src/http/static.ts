/**
 * The overlay and inbox assets, when they have been built into `dist/overlay/` (checked per
 * request, so building them while the server runs works); otherwise `/` is a small page saying
 * the server is running. Text goes out brotli- or gzip-compressed (the build writes `.br`/`.gz`
 * siblings; anything without them is compressed once and kept in memory), with strong ETags.
 */
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import { PACKAGE_ROOT, VERSION } from '../version.js'
import { HttpError } from './respond.js'

/**
 * `<package root>/dist/overlay`, wherever this module runs from: src/http (tests), dist/http (the
 * library) or a chunk of the bundled CLI (dist/chunks/). The package root is the nearest
 * directory above with a package.json (version.ts).
 */
export const DEFAULT_STATIC_DIR = path.join(PACKAGE_ROOT, 'dist', 'overlay')

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
}

function contentTypeOf(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream'
}

/** Text types worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt'])

/**
 * A content-hashed file (`chunks/<name>-<HASH>.js`, as scripts/build-overlay.mjs names them): its
 * bytes never change under that name, so a browser keeps it a year without asking again. Every
 * other file has a stable name (overlay.js, loader.js, the inbox) and is revalidated each time.
 */
const HASHED = /^\/chunks\/[\w.-]+-[A-Z0-9]{8}\.js$/

/** One file as it may be sent: its bytes in each coding and their strong validators. */
interface Representations {
  readonly identity: Buffer
  readonly br?: Buffer
  readonly gzip?: Buffer
  /** The SHA-256 of the identity bytes (base64url, 22 characters): every ETag is derived from it. */
  readonly hash: string
}

/**
 * What was read and compressed, by path, for as long as the file keeps its size and mtime. Bounded:
 * the oldest entry goes first (dist/overlay holds a few dozen files).
 */
const cache = new Map<string, { size: number; mtimeMs: number; value: Representations }>()
const CACHE_ENTRIES = 64

/** A precompressed sibling (`x.js.br`, `x.js.gz`, written at build time) when it is at least as new as the file. */
async function sibling(file: string, mtimeMs: number): Promise<Buffer | undefined> {
  try {
    const info = await stat(file)
    if (!info.isFile() || info.mtimeMs < mtimeMs) return undefined
    return await readFile(file)
  } catch {
    return undefined
  }
}

async function representations(file: string, size: number, mtimeMs: number): Promise<Representations> {
  const hit = cache.get(file)
  if (hit && hit.size === size && hit.mtimeMs === mtimeMs) return hit.value
  const identity = await readFile(file)
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 22)
  let value: Representations = { identity, hash }
  if (COMPRESSIBLE.has(path.extname(file).toLowerCase()) && identity.length >= 256) {
    // Built files come with their compressed siblings; anything else is compressed once here.
    const br = (await sibling(`${file}.br`, mtimeMs)) ?? brotliCompressSync(identity, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: identity.length } })
    const gzip = (await sibling(`${file}.gz`, mtimeMs)) ?? gzipSync(identity, { level: 9 })
    value = { identity, hash, ...(br.length < identity.length ? { br } : {}), ...(gzip.length < identity.length ? { gzip } : {}) }
  }
  cache.delete(file)
  cache.set(file, { size, mtimeMs, value })
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
  return value
}

/** The codings the request accepts (`Accept-Encoding`), with `q=0` meaning refused. */
function accepted(header: string | undefined): Set<string> {
  const out = new Set<string>()
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    if (name && !(q !== undefined && Number(q.slice(2)) === 0)) out.add(name)
  }
  return out
}

/** Whether `If-None-Match` names this ETag (weak comparison, as RFC 9110 asks for this header). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === '*') return true
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}

/**
 * Serve `pathname` from `dir` (GET/HEAD). Resolves false when there is no such file (the caller
 * answers 404, or the landing page for `/`). Never leaves `dir`. Text is sent brotli- or
 * gzip-compressed when the request accepts it (`Vary: Accept-Encoding`), each coding with its own
 * strong ETag, and a matching `If-None-Match` gets 304 without the bytes.
 */
export async function serveStatic(dir: string, pathname: string, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>): Promise<boolean> {
  let relative: string
  try {
    relative = decodeURIComponent(pathname)
  } catch {
    throw new HttpError(400, 'INVALID_PARAMS', 'The path is not validly URL-encoded (a malformed % escape).')
  }
  if (relative.includes('\0')) return false
  if (relative.endsWith('/')) relative += 'index.html'
  const root = path.resolve(dir)
  const normal = path.posix.normalize('/' + relative)
  const file = path.resolve(root, '.' + normal)
  if (file !== root && !file.startsWith(root + path.sep)) return false
  let info: { size: number; mtimeMs: number }
  try {
    const s = await stat(file)
    if (!s.isFile()) return false
    info = { size: s.size, mtimeMs: s.mtimeMs }
  } catch {
    return false
  }
  let rep: Representations
  try {
    rep = await representations(file, info.size, info.mtimeMs)
  } catch {
    return false
  }
  const codings = accepted(req.headers['accept-encoding'])
  const [coding, body] = rep.br && codings.has('br') ? (['br', rep.br] as const) : rep.gzip && codings.has('gzip') ? (['gzip', rep.gzip] as const) : (['identity', rep.identity] as const)
  const etag = `"${rep.hash}${coding === 'identity' ? '' : `-${coding}`}"`
  const vary = [headers.Vary, rep.br || rep.gzip ? 'Accept-Encoding' : undefined].filter(Boolean).join(', ')
  const common: Record<string, string> = {
    ...headers,
    ETag: etag,
    'Cache-Control': HASHED.test(normal) ? 'public, max-age=31536000, immutable' : 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    ...(vary ? { Vary: vary } : {}),
  }
  if (matches(req.headers['if-none-match'], etag)) {
    res.writeHead(304, common)
    res.end()
    return true
  }
  res.writeHead(200, {
    ...common,
    'Content-Type': contentTypeOf(file),
    'Content-Length': String(body.length),
    ...(coding === 'identity' ? {} : { 'Content-Encoding': coding }),
  })
  res.end(req.method === 'HEAD' ? undefined : body)
  return true
}

export interface LandingInfo {
  url: string
  mcpUrl: string
  requiresToken: boolean
}

/** The page `/` shows when no inbox has been built. */
export function landingPage(info: LandingInfo): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)
  const header = info.requiresToken ? ' --header "Authorization: Bearer &lt;token&gt;"' : ''
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Marginalia</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}code{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px}</style></head>
<body>
<h1>Marginalia is running</h1>
<p>Version ${esc(VERSION)}. The overlay and inbox have not been built, so this page stands in for them.</p>
<ul>
<li><a href="/health">/health</a>: status, store rev, agent presence</li>
<li><a href="/api/sessions">/api/sessions</a>: the REST API${info.requiresToken ? ' (needs the bearer token)' : ''}</li>
<li><a href="/api/events">/api/events</a>: live events (Server-Sent Events)</li>
<li><code>${esc(info.mcpUrl)}</code>: MCP over Streamable HTTP</li>
</ul>
<p>Connect Claude Code:</p>
<pre><code>claude mcp add --transport http marginalia ${esc(info.mcpUrl)}${header}</code></pre>
</body>
</html>
`
}
