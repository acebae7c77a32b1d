/**
 * `marginalia dev -- <command>`: the one command for dev servers that take no plugin (Angular's
 * `ng serve`, Rails, Django …): it starts this project's Marginalia server (or uses the one of this
 * project's store already answering; another project's never), runs the dev server's command, and
 * stops both together — when the command ends, or on Ctrl+C. `init` wires it into Angular's
 * `start` script (`marginalia dev -- ng serve`).
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { envPort, integerOption, storeFile, storeOption, STORE_USAGE } from './args.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { configuredPort } from './configured-port.js'
import { detectFramework, readProject } from './frameworks/index.js'
import { projectRoot } from './project.js'
import { fetchHealth, servesStore } from '../http/health.js'
import { closeStore } from './lifecycle.js'
import { openStore } from '../store/index.js'
import { openToldLedger } from '../store/told.js'

export const dev: Command = {
  summary: 'Run your dev server with the Marginalia server beside it: one command starts and stops both',
  usage: [
    'marginalia dev [--port PORT] [--store FILE] -- COMMAND [ARGS ...]',
    '',
    'For dev servers without a Marginalia plugin (Angular\'s ng serve, Rails, Django …): starts this',
    'project\'s Marginalia server (or uses the one already serving this project\'s store; another',
    'project\'s server on the port is refused), runs COMMAND, and stops both when COMMAND ends or on',
    'Ctrl+C; COMMAND\'s exit code is its. init writes it into an Angular app\'s start script:',
    '`marginalia dev -- ng serve`.',
    '',
    'Options:',
    '  -p, --port PORT    the server\'s port (default $MARGINALIA_PORT, else the port of the head snippet in your page, else 4848)',
    `  -s, --store FILE   ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, port: { type: 'string', short: 'p' } },
  positionals: true,
  run,
}

async function run(values: Values, positionals: string[]): Promise<void> {
  if (positionals.length === 0) throw new UsageError('marginalia dev needs the dev server\'s command after --, e.g. `marginalia dev -- ng serve`')
  const root = projectRoot()
  const project = readProject(root)
  const port = values.port !== undefined || process.env.MARGINALIA_PORT?.trim() ? integerOption(values, 'port', envPort(), 1, 65_535) : configuredPort(project, detectFramework(project)).port
  const file = storeFile(values)
  const base = `http://127.0.0.1:${port}`
  const health = await fetchHealth(base)
  let close: () => Promise<void> = () => Promise.resolve()
  if (health && !servesStore(health, file)) {
    const theirs = health.store?.project !== undefined ? `project "${health.store.project}"` : 'another project'
    throw new UsageError(`port ${port} is taken by the Marginalia server of ${theirs} (${health.store?.location ?? health.store?.id ?? '?'}): stop it, or run this project's on another port with --port (and the same port in the head snippet of your page)`)
  }
  if (health) log(`using this project's server already running at ${base}/`)
  else {
    const { startHttpServer } = await import('../http/app.js')
    const store = await openStore({ file })
    try {
      const http = await startHttpServer(store, { port, storeLocation: file, sources: { root }, told: openToldLedger(path.dirname(file)) })
      log(`inbox ${http.url}/ · MCP ${http.mcpUrl} · store ${path.relative(root, file) || file}`)
      close = async () => {
        await http.close()
        await closeStore(store)
      }
    } catch (e) {
      await closeStore(store)
      throw e
    }
  }
  const [command, ...args] = positionals as [string, ...string[]]
  const child = spawn(command, args, { stdio: 'inherit', shell: process.platform === 'win32' })
  // Ctrl+C reaches the whole process group (the dev server too); a TERM sent to this process is passed on.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
  process.on('SIGINT', () => undefined)
  process.on('SIGTERM', forward('SIGTERM'))
  const code = await new Promise<number>((resolve) => {
    child.once('error', (e) => {
      log(`could not run ${command}: ${e.message}`)
      resolve(127)
    })
    child.once('exit', (c, signal) => resolve(c ?? (signal ? 128 + 2 : 1)))
  })
  await close().catch((e: unknown) => log(`closing the server failed: ${e instanceof Error ? e.message : String(e)}`))
  process.exit(code)
}
