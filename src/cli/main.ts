/**
 * The `marginalia` command: picks the command, parses its options, runs it. One file per
 * command beside this one. stdout of `marginalia mcp` is the MCP protocol: everything else goes
 * to stderr.
 */
import { parseArgs } from 'node:util'
import { VERSION } from '../version.js'
import { archive } from './archive.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { help } from './help.js'
import { mcp } from './mcp.js'
import { serve } from './serve.js'

const COMMANDS: Readonly<Record<string, Command>> = { mcp, serve, archive }

/** The exit code, or -1 for a command that keeps serving. */
async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    process.stdout.write(help(COMMANDS) + '\n')
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
