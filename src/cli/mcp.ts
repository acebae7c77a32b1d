/** `marginalia mcp`: the MCP tools over stdio, which is what an agent launches. */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { createServer } from '../mcp/server.js'
import { openStore } from '../store/index.js'
import { STORE_USAGE, storeFile, storeOption } from './args.js'
import { log, type Command, type Values } from './command.js'
import { releaseLoadGarbage, stopper } from './lifecycle.js'
import { parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tool-flags.js'

export const mcp: Command = {
  summary: 'Serve the MCP tools over stdio (what an AI agent launches)',
  usage: [
    'marginalia mcp [--store FILE] [--profile NAME] [--allow a,b] [--deny a,b]',
    '',
    'Serves the annotation tools over MCP on stdin/stdout. stdout carries only the protocol;',
    'logs go to stderr. Exits when stdin closes or on SIGTERM, after flushing pending writes.',
    '',
    'Options:',
    `  -s, --store FILE     ${STORE_USAGE}`,
    ...TOOL_POLICY_USAGE,
  ].join('\n'),
  options: { ...storeOption, ...TOOL_POLICY_OPTIONS },
  run,
}

async function run(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const file = storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
  const server = createServer(store, policy)
  const transport = new StdioServerTransport()
  // On the way out, a transport that fails to close must not keep the store from being flushed.
  const stop = stopper(store, () => server.close().catch(() => {}))
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  await server.connect(transport)
  log(`MCP over stdio, store ${file}, tool profile ${policy.profile ?? 'default'}${policy.allow ? ` +${policy.allow.join(',')}` : ''}${policy.deny ? ` -${policy.deny.join(',')}` : ''}`)
}
