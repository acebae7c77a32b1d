/**
 * The `marginalia` command. stdout of `marginalia mcp` is the MCP protocol: everything else
 * goes to stderr.
 */
import path from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { openStore } from './store/open.js'
import { DEFAULT_STORE_FILE } from './store/file-adapter.js'
import { DEFAULT_ARCHIVE_AGE_MS, listArchive, parseDuration } from './store/archive.js'
import type { Store } from './store/store.js'
import { createServer } from './server.js'
import { parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tools/policy.js'
import { VERSION } from './version.js'

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
  const server = createServer(store, policy)
  const transport = new StdioServerTransport()
  let stopping = false
  const stop = async (why: string): Promise<void> => {
    if (stopping) return
    stopping = true
    log(`stopping (${why})`)
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    await server.close().catch(() => {})
    await closeStore(store)
    process.exit(0)
  }
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  await server.connect(transport)
  log(`MCP over stdio, store ${file}, tool profile ${policy.profile ?? 'default'}${policy.allow ? ` +${policy.allow.join(',')}` : ''}${policy.deny ? ` -${policy.deny.join(',')}` : ''}`)
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
