/**
 * The `marginalia` command. stdout of `marginalia mcp` is the MCP protocol: everything else
 * goes to stderr.
 */
import path from 'node:path'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { openStore } from './store/open.js'
import { DEFAULT_STORE_FILE } from './store/file-adapter.js'
import { DEFAULT_ARCHIVE_AGE_MS, listArchive, parseDuration } from './store/archive.js'
import type { Store } from './store/store.js'
import { createServer } from './server.js'
import { parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tools/policy.js'
import { VERSION } from './version.js'
// The HTTP server is loaded only by `serve` (a dynamic import): `mcp` starts faster without it.
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_MCP_SESSIONS,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SSE_MAX_BUFFERED_BYTES,
} from './http/defaults.js'

const log = (message: string): void => {
  process.stderr.write(`marginalia: ${message}\n`)
}

class UsageError extends Error {}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>

interface Command {
  /** Runs to completion (otherwise it serves until stopped). */
  oneShot?: boolean
  summary: string
  usage: string
  options: NonNullable<ParseArgsConfig['options']>
  run(values: Values): Promise<void>
}

const storeOption = { store: { type: 'string', short: 's' } } as const

const ARCHIVE: Command = {
  oneShot: true,
  summary: 'Move finished annotations out of the live store into .marginalia/archive/',
  usage: [
    'marginalia archive [--older-than 7d] [--store FILE]',
    'marginalia archive --list [--store FILE]',
    '',
    'Moves resolved and dismissed annotations last changed before the cut-off into',
    '<store dir>/archive/YYYY-MM-DD.jsonl (one JSON line per annotation, with its replies).',
    'Safe to re-run: an interrupted run is completed by the next one, nothing is duplicated.',
    '',
    'Options:',
    '      --older-than D  cut-off age: 30m, 12h, 7d, 2w, or 0 for every finished one (default 7d)',
    '      --list          list the archive files instead',
    `  -s, --store FILE    store file (default: $MARGINALIA_STORE or ${DEFAULT_STORE_FILE})`,
  ].join('\n'),
  options: { ...storeOption, 'older-than': { type: 'string' }, list: { type: 'boolean' } },
  run: runArchive,
}

const COMMANDS: Record<string, Command> = {
  mcp: {
    summary: 'Serve the MCP tools over stdio (what an AI agent launches)',
    usage: [
      'marginalia mcp [--store FILE] [--profile NAME] [--allow a,b] [--deny a,b]',
      '',
      'Serves the annotation tools over MCP on stdin/stdout. stdout carries only the protocol;',
      'logs go to stderr. Exits when stdin closes or on SIGTERM, after flushing pending writes.',
      '',
      'Options:',
      `  -s, --store FILE     store file (default: $MARGINALIA_STORE or ${DEFAULT_STORE_FILE})`,
      ...TOOL_POLICY_USAGE,
    ].join('\n'),
    options: { ...storeOption, ...TOOL_POLICY_OPTIONS },
    run: runMcp,
  },
  serve: {
    summary: 'Serve the REST API, live events, the overlay and MCP over HTTP (what `npm start` runs)',
    usage: [
      'marginalia serve [--port 4848] [--host 127.0.0.1] [--store FILE] [--token T] [--allow-origin O ...] [--max-body BYTES] [--max-sessions N] [--headers-timeout MS] [--request-timeout MS] [--sse-buffer BYTES] [--profile NAME] [--allow a,b] [--deny a,b]',
      '',
      'Serves the REST API (/api), Server-Sent Events (/events), MCP over Streamable HTTP (/mcp),',
      'the overlay assets when built, and /health. Logs go to stderr. Exits on SIGTERM/SIGINT.',
      '',
      'Options:',
      `  -p, --port PORT        port (default ${DEFAULT_PORT}; 0 = any free port)`,
      `      --host HOST        address to bind (default ${DEFAULT_HOST}); beyond loopback needs a token`,
      `  -s, --store FILE       store file (default: $MARGINALIA_STORE or ${DEFAULT_STORE_FILE})`,
      '      --token T          require "Authorization: Bearer T" (default: $MARGINALIA_TOKEN)',
      '      --allow-origin O   also accept this Origin, e.g. https://preview.example.com (repeatable)',
      '      --allow-host H     also accept this Host name (repeatable)',
      `      --max-body BYTES   largest request body (default ${DEFAULT_MAX_BODY_BYTES})`,
      `      --max-sessions N   MCP sessions kept at once; the least recently used idle one ends first (default ${DEFAULT_MAX_MCP_SESSIONS})`,
      `      --headers-timeout MS  a request's headers must arrive within this (default ${DEFAULT_HEADERS_TIMEOUT_MS})`,
      `      --request-timeout MS  a whole request must arrive within this (default ${DEFAULT_REQUEST_TIMEOUT_MS}); open streams are not cut`,
      `      --sse-buffer BYTES drop an event-stream client that owes more than this; it resumes with Last-Event-ID (default ${DEFAULT_SSE_MAX_BUFFERED_BYTES})`,
      ...TOOL_POLICY_USAGE,
    ].join('\n'),
    options: {
      ...storeOption,
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      token: { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'allow-host': { type: 'string', multiple: true },
      'max-body': { type: 'string' },
      'max-sessions': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      'sse-buffer': { type: 'string' },
      ...TOOL_POLICY_OPTIONS,
    },
    run: runServe,
  },
  archive: ARCHIVE,
}

async function runArchive(values: Values): Promise<void> {
  const file = storeFile(values)
  const directory = path.join(path.dirname(file), 'archive')
  if (values.list) {
    const files = listArchive(directory)
    if (files.length === 0) process.stdout.write(`No archive yet in ${directory}\n`)
    for (const f of files) process.stdout.write(`${f.file}\t${f.annotations} annotation(s)\t${f.bytes} bytes\n`)
    return
  }
  let olderThanMs = DEFAULT_ARCHIVE_AGE_MS
  if (values['older-than'] !== undefined) {
    try {
      olderThanMs = parseDuration(String(values['older-than']))
    } catch (e) {
      throw new UsageError(`--older-than: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  const store = await openStore({ file })
  try {
    const result = await store.archive({ olderThanMs, directory })
    if (result.archived === 0) process.stdout.write('Nothing to archive.\n')
    else {
      const earlier = result.completedEarlierRun > 0 ? ` (${result.completedEarlierRun} completed from an interrupted run)` : ''
      process.stdout.write(`Archived ${result.archived} annotation(s)${earlier}${result.file ? ` to ${result.file}` : ''}.\n`)
    }
  } finally {
    await closeStore(store)
  }
}

function storeFile(values: Values): string {
  const file = (values.store as string | undefined) ?? (process.env.MARGINALIA_STORE || DEFAULT_STORE_FILE)
  if (file.trim() === '') throw new UsageError('--store needs a file path')
  return path.resolve(file)
}

async function runMcp(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const file = storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
  const server = createServer(store, policy)
  const transport = new StdioServerTransport()
  const stop = stopper(store, () => server.close().catch(() => {}))
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  await server.connect(transport)
  log(`MCP over stdio, store ${file}, tool profile ${policy.profile ?? 'default'}${policy.allow ? ` +${policy.allow.join(',')}` : ''}${policy.deny ? ` -${policy.deny.join(',')}` : ''}`)
}

function integerOption(values: Values, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name]
  if (raw === undefined) return fallback
  const text = String(raw).trim()
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got "${String(raw)}")`)
  return n
}

function listOption(values: Values, name: string): string[] {
  const raw = values[name]
  return raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String)
}

async function runServe(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const port = integerOption(values, 'port', DEFAULT_PORT, 0, 65_535)
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
  const { assertSafeBinding, startHttpServer } = await import('./http/app.js')
  const { isWildcardHost } = await import('./http/security.js')
  try {
    assertSafeBinding(host, token) // before the store is opened: refuse early, touch nothing
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e))
  }
  const file = storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
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
      tools: policy,
      log,
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
  const auth = token === undefined ? '' : ' --header "Authorization: Bearer <token>"'
  log(
    [
      `serving store ${file}`,
      `  URL:     ${http.url}/${isWildcardHost(host) ? `  (listening on every interface, ${host})` : ''}`,
      `  API:     ${http.url}/api   events: ${http.url}/api/events   health: ${http.url}/health`,
      `  MCP:     ${http.mcpUrl}${token === undefined ? '' : '   (needs Authorization: Bearer <token>)'}`,
      `  Connect Claude Code: claude mcp add --transport http marginalia ${http.mcpUrl}${auth}`,
    ].join('\n'),
  )
}

/**
 * Loading a big store leaves its parse garbage (the snapshot text, temporary arrays) in the heap
 * until V8 gets round to it, and V8 keeps the pages meanwhile. A long-running server collects it
 * once, right away, so its memory reflects what it holds (measured at 100 000 annotations:
 * RSS 335 → 260 MB).
 */
function releaseLoadGarbage(store: Store): void {
  if (store.rev < 10_000) return // small stores: nothing worth a full collection
  v8.setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (() => void) | undefined
  gc?.()
}

/**
 * The one way a server command stops: once, closing what serves, then the store (flushing its
 * writes), then exiting 0 — or 1 if that takes over ten seconds.
 */
function stopper(store: Store, closeServing: () => Promise<void>): (why: string) => Promise<void> {
  let stopping = false
  return async (why) => {
    if (stopping) return
    stopping = true
    log(`stopping (${why})`)
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    await closeServing()
    await closeStore(store)
    process.exit(0)
  }
}

async function closeStore(store: Store): Promise<void> {
  try {
    await store.close()
  } catch (e) {
    log(`could not close the store cleanly: ${e instanceof Error ? e.message : String(e)}`)
  }
}

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length))
  return [
    `marginalia ${VERSION} — annotate a running web app; an AI agent answers over MCP.`,
    '',
    'Usage: marginalia <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    '  -h, --help       show help (also: marginalia <command> --help)',
    '  -v, --version    print the version',
  ].join('\n')
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    process.stdout.write(help() + '\n')
    return first === undefined ? 1 : 0
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(VERSION + '\n')
    return 0
  }
  const command = COMMANDS[first]
  if (!command) {
    log(`unknown command "${first}". Commands: ${Object.keys(COMMANDS).join(', ')}. See marginalia --help.`)
    return 2
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    process.stdout.write(command.usage + '\n')
    return 0
  }
  let values: Values
  try {
    ;({ values } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }))
  } catch (e) {
    log(`${e instanceof Error ? e.message : String(e)}\n\nUsage: ${command.usage.split('\n')[0]}`)
    return 2
  }
  try {
    await command.run(values)
    return command.oneShot ? 0 : -1 // servers keep running
  } catch (e) {
    log(e instanceof Error ? e.message : String(e))
    return e instanceof UsageError ? 2 : 1
  }
}

const code = await main(process.argv.slice(2))
if (code >= 0) process.exitCode = code
