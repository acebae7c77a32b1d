/** `marginalia serve`: REST, live events, the overlay and MCP over HTTP (what `npm start` runs). */
// The HTTP server is loaded only when this command runs (a dynamic import): `mcp` starts faster without it.
import {
  DEFAULT_AUTH_FAILURE_BURST,
  DEFAULT_AUTH_FAILURES_PER_SECOND,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_MCP_SESSIONS,
  DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY,
  DEFAULT_MAX_STREAMS_PER_IDENTITY,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SSE_MAX_BUFFERED_BYTES,
} from '../http/defaults.js'
import path from 'node:path'
import { openStore } from '../store/index.js'
import { openToldLedger } from '../store/told.js'
import { CONNECT_AGENT, remoteAgentLine } from '../http/connect.js'
import { headSnippet } from '../integrations/shared/loader-script.js'
import { envPort, integerOption, isDatabaseUrl, listOption, parseDuration, STORE_USAGE, storeFile, storeOption } from './args.js'
import { warnIfTrackedByGit } from './git-tracked.js'
import { DEFAULT_RATE_BURST, DEFAULT_RATE_PER_SECOND } from '../http/rate-limit.js'
import type { TeamOptions } from '../http/options.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { closeStore, releaseLoadGarbage, stopper } from './lifecycle.js'
import { parseUploadFlags, UPLOAD_OPTIONS, UPLOAD_USAGE } from './upload-flags.js'
import { parseWaitFlags, parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tool-flags.js'

export const serve: Command = {
  summary: 'Serve the REST API, live events, the overlay and MCP over HTTP (what `npm start` runs)',
  usage: [
    'marginalia serve [--port 4848] [--host 127.0.0.1] [--store FILE|postgres://URL] [--token T] [--require-sign-in] [--public-url URL] [--trust-proxy] [--rate-limit N] [--rate-burst N] [--sessions-per-identity N] [--streams-per-identity N] [--auth-failures N] [--auth-failure-burst N] [--session-ttl D] [--allow-origin O ...] [--allow-host H ...] [--max-body BYTES] [--max-sessions N] [--headers-timeout MS] [--request-timeout MS] [--sse-buffer BYTES] [--upload-quota BYTES] [--upload-window D] [--upload-grace D] [--min-free-space BYTES] [--profile NAME] [--allow a,b] [--deny a,b] [--max-wait-ms N] [--root DIR] [--sources FILE] [--editor NAME] [--webhooks-allow-private] [--webhooks-retry MS] [--no-webhooks]',
    '',
    'Serves the REST API (/api), Server-Sent Events (/events), MCP over Streamable HTTP (/mcp),',
    'the overlay assets when built, and /health. Logs go to stderr. Exits on SIGTERM/SIGINT.',
    '',
    'Options:',
    `  -p, --port PORT        port (default $MARGINALIA_PORT or ${DEFAULT_PORT}; 0 = any free port)`,
    `      --host HOST        address to bind (default ${DEFAULT_HOST}); beyond loopback needs a token`,
    `  -s, --store FILE       ${STORE_USAGE}`,
    '      --token T          require "Authorization: Bearer T" (default: $MARGINALIA_TOKEN)',
    '      --allow-origin O   also accept this Origin, e.g. https://staging.example.com (repeatable); CORS answers only these;',
    '                         people sign in from these app origins (team inbox); the browser extension\'s exact',
    '                         origin lets it in (chrome-extension://<id>: see marginalia extension)',
    '      --require-sign-in  ask every request for a person\'s session or an agent token even before anyone was added',
    '                         (on by itself once `marginalia people add` or `agents add` added someone)',
    '      --public-url URL   the address people reach this server at (sign-in links; its host passes the Host check)',
    '      --trust-proxy      behind a reverse proxy: use X-Forwarded-For/-Host (only when the proxy sets them)',
    `      --rate-limit N     requests per second per identity, sustained (default ${DEFAULT_RATE_PER_SECOND}; 0 = no limit); over it: 429 + Retry-After`,
    `      --rate-burst N     requests per identity at once on top of the rate (default ${DEFAULT_RATE_BURST})`,
    `      --sessions-per-identity N  MCP sessions one person or agent keeps at once; a new one ends their own oldest idle one (default ${DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY})`,
    `      --streams-per-identity N  event streams and MCP requests one identity has open at once; over it: 429 (default ${DEFAULT_MAX_STREAMS_PER_IDENTITY})`,
    `      --auth-failures N  failed authentications per client address per second, sustained, before 429 and no key derivation (default ${DEFAULT_AUTH_FAILURES_PER_SECOND}; 0 = no limit)`,
    `      --auth-failure-burst N  failed authentications per client address at once on top of that (default ${DEFAULT_AUTH_FAILURE_BURST})`,
    '      --session-ttl D    how long a person\'s browser session works, e.g. 12h (default 12h)',
    '      --allow-host H     also accept this Host name (repeatable)',
    `      --max-body BYTES   largest request body (default ${DEFAULT_MAX_BODY_BYTES})`,
    `      --max-sessions N   MCP sessions kept at once; the least recently used idle one ends first (default ${DEFAULT_MAX_MCP_SESSIONS})`,
    `      --headers-timeout MS  a request's headers must arrive within this (default ${DEFAULT_HEADERS_TIMEOUT_MS})`,
    `      --request-timeout MS  a whole request must arrive within this (default ${DEFAULT_REQUEST_TIMEOUT_MS}); open streams are not cut`,
    `      --sse-buffer BYTES drop an event-stream client that owes more than this; it resumes with Last-Event-ID (default ${DEFAULT_SSE_MAX_BUFFERED_BYTES})`,
    ...UPLOAD_USAGE,
    '      --root DIR         the app\'s project root: inbox links open files in the editor, get_annotation shows the lines around a location',
    '      --sources FILE     a marginalia-sources.json from a sourceLocations: \'ids\' build: resolves data-mid ids to file:line',
    '      --editor NAME      editor links: vscode (default), cursor, windsurf, idea, none',
    '      --webhooks-allow-private  deliver webhooks to private and loopback addresses too (a loopback-bound server always',
    '                         may; link-local and metadata addresses never); see marginalia webhooks',
    '      --webhooks-retry MS  a failed webhook delivery\'s first retry after about this long, doubling up to 1 h (default 5000)',
    '      --no-webhooks      deliver no webhooks from this server (another server on the store may)',
    // The policy binds agents beyond /mcp here: said under --deny, the last of the three.
    ...TOOL_POLICY_USAGE.flatMap((line) => (line.startsWith('      --deny ') ? [line, '                         (the policy binds agent tokens on REST and the event streams as on /mcp: 403 naming it)'] : [line])),
  ].join('\n'),
  options: {
    ...storeOption,
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    token: { type: 'string' },
    'allow-origin': { type: 'string', multiple: true },
    'require-sign-in': { type: 'boolean' },
    'public-url': { type: 'string' },
    'trust-proxy': { type: 'boolean' },
    'rate-limit': { type: 'string' },
    'rate-burst': { type: 'string' },
    'sessions-per-identity': { type: 'string' },
    'streams-per-identity': { type: 'string' },
    'auth-failures': { type: 'string' },
    'auth-failure-burst': { type: 'string' },
    'session-ttl': { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
    'max-body': { type: 'string' },
    'max-sessions': { type: 'string' },
    'headers-timeout': { type: 'string' },
    'request-timeout': { type: 'string' },
    'sse-buffer': { type: 'string' },
    root: { type: 'string' },
    sources: { type: 'string' },
    editor: { type: 'string' },
    'webhooks-allow-private': { type: 'boolean' },
    'webhooks-retry': { type: 'string' },
    'no-webhooks': { type: 'boolean' },
    ...TOOL_POLICY_OPTIONS,
    ...UPLOAD_OPTIONS,
  },
  run,
}

async function run(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const port = integerOption(values, 'port', envPort(), 0, 65_535)
  const host = (values.host as string | undefined) ?? DEFAULT_HOST
  if (host.trim() === '') throw new UsageError('--host needs an address')
  const token = (values.token as string | undefined) ?? (process.env.MARGINALIA_TOKEN || undefined)
  if (token !== undefined && token.trim() === '') throw new UsageError('--token must not be empty')
  const maxBodyBytes = integerOption(values, 'max-body', DEFAULT_MAX_BODY_BYTES, 1, 1024 ** 3)
  const maxMcpSessions = integerOption(values, 'max-sessions', DEFAULT_MAX_MCP_SESSIONS, 1, 100_000)
  const requestTimeoutMs = integerOption(values, 'request-timeout', DEFAULT_REQUEST_TIMEOUT_MS, 100, 3_600_000)
  const headersTimeoutMs = integerOption(values, 'headers-timeout', Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeoutMs), 100, 3_600_000)
  if (headersTimeoutMs > requestTimeoutMs) throw new UsageError(`--headers-timeout (${headersTimeoutMs}) must not be longer than --request-timeout (${requestTimeoutMs})`)
  const sseMaxBufferedBytes = integerOption(values, 'sse-buffer', DEFAULT_SSE_MAX_BUFFERED_BYTES, 1024, 1024 ** 3)
  const sources = await sourceOptions(values)
  const uploads = parseUploadFlags(values)
  const team = teamOptions(values)
  const { assertPortFree, assertSafeBinding, startHttpServer } = await import('../http/app.js')
  const { isWildcardHost } = await import('../http/security.js')
  try {
    assertSafeBinding(host, token, team.requireSignIn === true) // before the store is opened: refuse early, touch nothing
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
  await assertPortFree(host, port) // before the store is opened: a server that cannot bind touches nothing
  const file = storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
  if (!isDatabaseUrl(file)) void warnIfTrackedByGit(store.location, log) // git runs beside the start
  let http: Awaited<ReturnType<typeof startHttpServer>>
  try {
    http = await startHttpServer(store, {
      port,
      host,
      token,
      allowOrigins: listOption(values, 'allow-origin'),
      allowHosts: listOption(values, 'allow-host'),
      maxBodyBytes,
      maxMcpSessions,
      headersTimeoutMs,
      requestTimeoutMs,
      sseMaxBufferedBytes,
      uploads,
      tools: { ...policy, ...parseWaitFlags(values) },
      log,
      storeLocation: store.location,
      ...(isDatabaseUrl(file) ? {} : { told: openToldLedger(path.dirname(file)) }),
      webhooks: webhooks(values, file),
      team,
      ...(sources ? { sources } : {}),
    })
  } catch (e) {
    await closeStore(store)
    throw e
  }
  const stop = stopper(store, () =>
    http.close().catch((e: unknown) => log(`could not close the HTTP server cleanly: ${e instanceof Error ? e.message : String(e)}`)),
  )
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  log(
    [
      `serving store ${store.location}`,
      `  URL:     ${http.url}/${isWildcardHost(host) ? `  (listening on every interface, ${host})` : ''}`,
      `  API:     ${http.url}/api   events: ${http.url}/api/events   health: ${http.url}/health`,
      `  MCP:     ${http.mcpUrl}${token === undefined ? '' : '   (needs Authorization: Bearer <token>)'}`,
      `  ${CONNECT_AGENT}`,
      ...(token !== undefined || team.publicUrl !== undefined || team.requireSignIn ? [`  ${remoteAgentLine(http.mcpUrl, token !== undefined)}`] : []),
      `  Overlay: with the Vite plugin it is in your pages; else paste first in <head>, in development only:`,
      ...headSnippet({ server: team.publicUrl ?? http.url, command: serveCommand(Number(new URL(http.url).port)) })
        .split('\n')
        .map((l) => `    ${l}`),
      ...(store.identities.any || team.requireSignIn ? [`  Team:    sign-in required (${store.identities.list().filter((i) => !i.revokedAt).length} people and agents); add people with marginalia people add NAME`] : []),
    ].join('\n'),
  )
}

/** --webhooks-allow-private, --webhooks-retry, --no-webhooks; the endpoints live where the store does (`file`: as given, with a database's password). */
function webhooks(values: Values, file: string): import('../http/options.js').HttpServerOptions['webhooks'] {
  if (values['no-webhooks'] === true) return false
  return {
    location: file,
    ...(values['webhooks-allow-private'] === true ? { allowPrivate: true } : {}),
    ...(values['webhooks-retry'] !== undefined ? { retryBaseMs: integerOption(values, 'webhooks-retry', 5_000, 10, 3_600_000) } : {}),
  }
}

/** What starts this server again, as the page's note says it. */
function serveCommand(port: number): string {
  return `npx --no-install marginalia serve${port === DEFAULT_PORT ? '' : ` --port ${port}`}`
}

/** --require-sign-in, --public-url, --trust-proxy, the per-identity and per-address limits, --session-ttl. */
export function teamOptions(values: Values): TeamOptions {
  const team: TeamOptions = { requireSignIn: values['require-sign-in'] === true, trustProxy: values['trust-proxy'] === true }
  const publicUrl = values['public-url'] as string | undefined
  if (publicUrl !== undefined) {
    try {
      const url = new URL(publicUrl)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
      team.publicUrl = url.origin
    } catch {
      throw new UsageError(`--public-url must be an http(s) URL like https://marginalia.example.com (got "${publicUrl}")`)
    }
  }
  team.ratePerSecond = integerOption(values, 'rate-limit', DEFAULT_RATE_PER_SECOND, 0, 1_000_000)
  team.rateBurst = integerOption(values, 'rate-burst', DEFAULT_RATE_BURST, 1, 1_000_000)
  team.maxMcpSessionsPerIdentity = integerOption(values, 'sessions-per-identity', DEFAULT_MAX_MCP_SESSIONS_PER_IDENTITY, 1, 100_000)
  team.maxStreamsPerIdentity = integerOption(values, 'streams-per-identity', DEFAULT_MAX_STREAMS_PER_IDENTITY, 1, 100_000)
  team.authFailuresPerSecond = integerOption(values, 'auth-failures', DEFAULT_AUTH_FAILURES_PER_SECOND, 0, 1_000_000)
  team.authFailureBurst = integerOption(values, 'auth-failure-burst', DEFAULT_AUTH_FAILURE_BURST, 1, 1_000_000)
  const ttl = values['session-ttl'] as string | undefined
  if (ttl !== undefined) {
    try {
      team.sessionTtlMs = parseDuration(ttl)
    } catch (e) {
      throw new UsageError(`--session-ttl: ${e instanceof Error ? e.message : String(e)}`)
    }
    if (!(team.sessionTtlMs > 0)) throw new UsageError('--session-ttl must be longer than 0')
  }
  return team
}

/** --root, --sources, --editor; bad values fail before the store is opened. */
async function sourceOptions(values: Values): Promise<import('../sources/index.js').SourceOptions | undefined> {
  const { EDITORS, loadManifest } = await import('../sources/index.js')
  const root = values.root as string | undefined
  const manifestFile = values.sources as string | undefined
  const editor = values.editor as string | undefined
  if (editor !== undefined && !(EDITORS as readonly string[]).includes(editor)) throw new UsageError(`--editor must be one of ${EDITORS.join(', ')} (got ${editor})`)
  if (root === undefined && manifestFile === undefined && editor === undefined) return undefined
  const { existsSync } = await import('node:fs')
  if (root !== undefined && !existsSync(root)) throw new UsageError(`--root ${root}: no such directory; pass the app's project root`)
  let manifest: Record<string, string> | undefined
  if (manifestFile !== undefined) {
    try {
      manifest = loadManifest(manifestFile)
    } catch (e) {
      throw new UsageError(e instanceof Error ? e.message : String(e))
    }
  }
  return {
    ...(root !== undefined ? { root: path.resolve(root) } : manifestFile !== undefined ? { root: path.dirname(path.resolve(manifestFile)) } : {}),
    ...(manifest ? { manifest } : {}),
    ...(editor !== undefined ? { editor } : {}),
  }
}
