/**
 * The overlay and inbox assets, when they have been built into `dist/overlay/` (checked per
 * request, so building them while the server runs works); otherwise `/` is a small page saying
 * the server is running.
 */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
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

/**
 * Serve `pathname` from `dir` (GET/HEAD). Resolves false when there is no such file (the caller
 * answers 404, or the landing page for `/`). Never leaves `dir`.
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
  const file = path.resolve(root, '.' + path.posix.normalize('/' + relative))
  if (file !== root && !file.startsWith(root + path.sep)) return false
  let size: number
  try {
    const info = await stat(file)
    if (!info.isFile()) return false
    size = info.size
  } catch {
    return false
  }
  res.writeHead(200, {
    'Content-Type': contentTypeOf(file),
    'Content-Length': String(size),
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  })
  if (req.method === 'HEAD') {
    res.end()
    return true
  }
  const stream = createReadStream(file)
  stream.on('error', () => res.destroy())
  stream.pipe(res)
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
