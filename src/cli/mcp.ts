/** `marginalia mcp`: the MCP tools over stdio, which is what an agent launches. */
import path from 'node:path'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { announceStdioAgent } from '../http/presence.js'
import { createServer } from '../mcp/server.js'
import { openStore } from '../store/index.js'
import { envPort, isDatabaseUrl, STORE_USAGE, storeFile, storeOption } from './args.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { warnIfTrackedByGit } from './git-tracked.js'
import { log, type Command, type Values } from './command.js'
import { releaseLoadGarbage, stopper } from './lifecycle.js'
import { parseWaitFlags, parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tool-flags.js'

export const mcp: Command = {
  summary: 'Serve the MCP tools over stdio (what an AI agent launches)',
  usage: [
    'marginalia mcp [--store FILE|postgres://URL] [--profile NAME] [--allow a,b] [--deny a,b] [--lean] [--burst-ms N] [--max-wait-ms N]',
    '',
    'Serves the annotation tools over MCP on stdin/stdout. stdout carries only the protocol;',
    'logs go to stderr. Exits when stdin closes or on SIGTERM, after flushing pending writes.',
    '',
    'Options:',
    `  -s, --store FILE     ${STORE_USAGE}`,
    ...TOOL_POLICY_USAGE,
    '      --lean           list no output schemas (for clients that never read them; results keep structured content)',
  ].join('\n'),
  options: { ...storeOption, ...TOOL_POLICY_OPTIONS, lean: { type: 'boolean' } },
  run,
}

async function run(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const waits = parseWaitFlags(values)
  const file = storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
  if (!isDatabaseUrl(file)) warnIfTrackedByGit(store.location, log)
  const server = createServer(store, { ...policy, ...waits, ...(values.lean === true ? { outputSchemas: false } : {}) })
  const transport = new StdioServerTransport()
  // On the way out, a transport that fails to close must not keep the store from being flushed.
  const stop = stopper(store, () => server.close().catch(() => {}))
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  watchTransport(server.server, (why) => void stop(why, 1))
  await server.connect(transport)
  if (!isDatabaseUrl(file)) {
    announceStdioAgent(path.dirname(file)) // the overlay of a `serve` on this store shows this agent
    void warnIfOtherStore(store.location)
  }
  log(`MCP over stdio, store ${store.location}, tool profile ${policy.profile ?? 'default'}${policy.allow ? ` +${policy.allow.join(',')}` : ''}${policy.deny ? ` -${policy.deny.join(',')}` : ''}`)
}

/** The two-store trap: a `serve` on the configured port that serves another store than this agent's. */
async function warnIfOtherStore(file: string): Promise<void> {
  const port = envPort()
  const health = await fetchHealth(`http://127.0.0.1:${port}`)
  if (health && !servesStore(health, file)) {
    const other = health.store?.location
    log(`warning: the server on port ${port} serves ${other !== undefined ? `the store ${other}` : 'another store'}, but this agent uses ${file}: annotations made in the browser will not reach this agent. Start both in the same project${other !== undefined ? `, or pass --store ${other}` : ''}.`)
  }
}

/** The SDK's stdio read buffer limit: a line longer than this closes its transport. */
const STDIO_LIMIT_TEXT = 'ReadBuffer exceeded maximum size'

/**
 * When the stdio transport errors or closes on its own (a message over the SDK's 10 MiB limit
 * closes it), log the reason on stderr, answer a JSON-RPC error where the client can still read
 * it, and stop through the normal path (flush, close the store) with a non-zero exit code —
 * never a process that lingers answering nothing, or exits 0 without a word.
 */
function watchTransport(protocol: { onerror?: (error: Error) => void; onclose?: () => void }, stop: (why: string) => void): void {
  let reason: string | undefined
  protocol.onerror = (error) => {
    const message = error instanceof Error ? error.message : String(error)
    if (message.includes(STDIO_LIMIT_TEXT)) {
      reason = 'a message over 10 MiB was received; the MCP SDK closed the connection'
      const reply = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Message too large: over 10 MiB; the connection is closed.' } }
      process.stdout.write(`${JSON.stringify(reply)}\n`)
    } else reason ??= `stdio transport error: ${message}`
    log(reason)
  }
  protocol.onclose = () => stop(reason ? `the stdio transport closed: ${reason}` : 'the stdio transport closed')
}
