/**
 * `marginalia mcp`: the MCP tools over stdio, which is what an agent launches — the way `init`
 * connects an agent (its configs run `marginalia mcp --store <store> --root <project>`). A running
 * `serve` on the same store shows this agent through a presence file beside the store: connected
 * while the process runs, listening while one of its calls waits for the person.
 */
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio'
import type { Transport } from '@modelcontextprotocol/server'
import { announceStdioAgent, PollLeases } from '../http/presence.js'
import { createServer } from '../mcp/server.js'
import { TaskTable } from '../mcp/tasks.js'
import { createToolRegistry, type ToolRegistry, type ToolService } from '../tools/registry.js'
import { openStore } from '../store/index.js'
import { openToldLedger } from '../store/told.js'
import { envPort, isDatabaseUrl, STORE_USAGE, storeFile, storeOption } from './args.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { projectPort } from '../http/project-port.js'
import { defaultStoreFile, projectRoot } from './project.js'
import { warnIfTrackedByGit } from './git-tracked.js'
import { afterFirstRequest } from './first-request.js'
import { wrapTransport, writingKeptJson } from './transport.js'
import { answeringPageReads } from './page-reads.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { releaseLoadGarbage, stopper } from './lifecycle.js'
import { parseWaitFlags, parseToolPolicyFlags, TOOL_POLICY_OPTIONS, TOOL_POLICY_USAGE } from './tool-flags.js'
import { waitTaskOf } from '../tools/define.js'

export const mcp: Command = {
  summary: 'Serve the MCP tools over stdio (what an AI agent launches)',
  usage: [
    'marginalia mcp [--store FILE|postgres://URL] [--root DIR] [--profile NAME] [--allow a,b] [--deny a,b] [--lean] [--channel] [--burst-ms N] [--max-wait-ms N]',
    '',
    'Serves the annotation tools over MCP on stdin/stdout. stdout carries only the protocol;',
    'logs go to stderr. Exits when stdin closes or on SIGTERM, after flushing pending writes.',
    '',
    'Options:',
    `  -s, --store FILE     ${STORE_USAGE}`,
    '      --root DIR       the app\'s project root: get_annotation shows the source lines around a location (init writes it)',
    ...TOOL_POLICY_USAGE,
    '      --lean           list no output schemas (for clients that never read them; results keep structured content)',
    '      --channel        Claude Code listens to this server as a channel (launched with --dangerously-load-development-channels server:NAME):',
    '                       what the channel pushes counts as told, so the hooks and the plugin monitor do not push it again',
    '',
    'Claude Code channel: on a 2025 session the server declares experimental claude/channel and',
    'claude/channel/permission, pushes each new pending annotation and each reply of the person on an',
    'annotation the agent works on, and relays permission prompts to the overlay and the inbox.',
  ].join('\n'),
  options: { ...storeOption, ...TOOL_POLICY_OPTIONS, lean: { type: 'boolean' }, root: { type: 'string' }, channel: { type: 'boolean' } },
  run,
}

async function run(values: Values): Promise<void> {
  const policy = parseToolPolicyFlags(values) // bad --profile/--allow/--deny fail before the store is opened
  const waits = parseWaitFlags(values)
  const root = rootOption(values)
  // A project config names no store (it is committed and cloned): the store of the project the
  // agent runs in — the one --root names, else the one found from here.
  const file = values.store === undefined && root !== undefined && !process.env.MARGINALIA_STORE && !process.env.DATABASE_URL ? defaultStoreFile(root) : storeFile(values)
  const store = await openStore({ file })
  releaseLoadGarbage(store)
  // Built here, so bad options fail before the connection opens (the entry builds its instances later).
  const registry = createToolRegistry(store, { ...policy, ...waits, ...(root !== undefined ? { sources: { root } } : {}) })
  const presence = isDatabaseUrl(file) ? undefined : path.dirname(file)
  const tasks = new TaskTable({ waitOf: (name) => waitTaskOf(registry.tool(name)) })
  // Claude Code's channel: pushes and permission prompts, kept single across push paths by the told ledger beside the store.
  const channel = { ledger: presence === undefined ? undefined : openToldLedger(presence), countsAsTold: values.channel === true, log }
  const serverOptions = { registry: presence === undefined ? registry : announcingListening(registry, presence), tasks, channel, ...(channel.ledger ? { told: channel.ledger } : {}), ...(values.lean === true ? { outputSchemas: false } : {}) }
  let reason: string | undefined
  // Closed by an error (a message over the limit): exit non-zero; closed because stdin ended: exit 0.
  // Checks that only warn (stderr) wait for the first request past the handshake (or for the stop).
  let warnings: Promise<unknown> | undefined
  const warn = (): Promise<unknown> => (warnings ??= Promise.all([isDatabaseUrl(file) ? undefined : warnIfTrackedByGit(store.location, log), presence === undefined ? undefined : warnIfOtherStore(store.location, root)]))
  // Page reads are answered beside the SDK (page-reads.ts), by the same service the server calls;
  // the next page of a walk is read ahead from the store.
  const transport = answeringPageReads(
    afterFirstRequest(
      observeClose(writingKeptJson(new StdioServerTransport()), () => void (reason ? stop(`the stdio transport closed: ${reason}`, 1) : stop('stdin closed'))),
      () => void warn(),
    ),
    serverOptions.registry,
    store,
  )
  // One entry serves both revisions: a 2025 client's initialize pins a session instance, a
  // 2026-07-28 client's server/discover (or first request) pins a stateless one.
  const handle = serveStdio(({ era }) => createServer(store, { ...serverOptions, era }), {
    transport,
    onerror: (error) => {
      const message = error instanceof Error ? error.message : String(error)
      if (message.includes(STDIO_LIMIT_TEXT)) {
        reason = 'a message over 10 MiB was received; the MCP SDK closed the connection'
        const reply = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Message too large: over 10 MiB; the connection is closed.' } }
        process.stdout.write(`${JSON.stringify(reply)}\n`)
        log(reason)
      } else if (/transport|stdout|stdin|EPIPE/i.test(message)) {
        reason ??= `stdio transport error: ${message}`
        log(reason)
      } else log(`MCP: ${message}`)
    },
  })
  // On the way out, a transport that fails to close must not keep the store from being flushed.
  const stop = stopper(store, async () => {
    tasks.close()
    await handle.close().catch(() => {})
    await warn()
  })
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  if (presence !== undefined) {
    announceStdioAgent(presence) // the overlay of a `serve` on this store shows this agent
  }
  log(`MCP over stdio, store ${store.location}${root !== undefined ? `, project ${root}` : ''}, tool profile ${policy.profile ?? 'default'}${policy.allow ? ` +${policy.allow.join(',')}` : ''}${policy.deny ? ` -${policy.deny.join(',')}` : ''}`)
}

/**
 * --root: an existing directory, absolute; a bad one fails before the store is opened. Without it
 * (and without --store), the project found from the working directory. An agent variable the
 * agent left unexpanded (`${workspaceFolder}`) is said on stderr and the project found likewise.
 */
function rootOption(values: Values): string | undefined {
  let root = values.root as string | undefined
  if (root !== undefined && /\$\{[^}]*\}/.test(root)) {
    log(`--root ${root}: the agent did not expand this variable; using the project found from ${process.cwd()}`)
    root = undefined
  }
  if (root === undefined) return values.store === undefined && !process.env.MARGINALIA_STORE ? projectRoot() : undefined
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new UsageError(`--root ${root}: no such directory; pass the app's project root (the folder with its package.json)`)
  return path.resolve(root)
}

/**
 * `registry` with its listening calls (watch_annotations, ask, …) counted in this agent's presence
 * file, so the overlay reads "Agent listening" for a stdio agent that waits, as for an HTTP one.
 */
function announcingListening(registry: ToolRegistry, storeDir: string): ToolService {
  let watching = 0
  // A task's poll answers without waiting; the agent listens between polls while the wait goes on.
  const polls = new PollLeases(() => announceStdioAgent(storeDir, watching + polls.size))
  return {
    list: () => registry.list(),
    serverInfo: () => registry.serverInfo(),
    async call(name, args, options) {
      if (waitTaskOf(registry.tool(name)) === undefined) return registry.call(name, args, options)
      if (options?.pollDeadline !== undefined) {
        const outcome = await registry.call(name, args, options)
        polls.polled(name, args, options.pollDeadline, outcome)
        return outcome
      }
      announceStdioAgent(storeDir, ++watching + polls.size)
      try {
        return await registry.call(name, args, options)
      } finally {
        announceStdioAgent(storeDir, --watching + polls.size)
      }
    },
  }
}

/** The two-store trap: a `serve` on the configured port that serves another store than this agent's. */
async function warnIfOtherStore(file: string, root: string | undefined): Promise<void> {
  const port = process.env.MARGINALIA_PORT?.trim() ? envPort() : root !== undefined ? projectPort(root) : envPort()
  const health = await fetchHealth(`http://127.0.0.1:${port}`)
  if (health && !servesStore(health, file)) {
    const other = health.store?.location
    log(`warning: the server on port ${port} serves ${other !== undefined ? `the store ${other}` : 'another store'}, but this agent uses ${file}: annotations made in the browser will not reach this agent. Start both in the same project${other !== undefined ? `, or pass --store ${other}` : ''}.`)
  }
}

/** The SDK's stdio read buffer limit: a line longer than this closes its transport. */
const STDIO_LIMIT_TEXT = 'ReadBuffer exceeded maximum size'

/**
 * `transport` with `onClose` called when it closes on its own or is closed (a message over the
 * SDK's 10 MiB limit closes it): the CLI then stops through the normal path (flush, close the
 * store) with a non-zero exit code — never a process that lingers answering nothing.
 */
function observeClose(transport: Transport, onClose: () => void): Transport {
  let closed = false
  return wrapTransport(transport, {
    onclose: (handler) => () => {
      handler?.()
      if (closed) return
      closed = true
      onClose()
    },
  })
}
