/**
 * The `marginalia` command once main.ts has ruled out `--version`: picks the command, loads it
 * (commands.ts: one file per command beside this one), parses its options, runs it. stdout of
 * `marginalia mcp` is the MCP protocol: everything else goes to stderr.
 */
import { parseArgs } from 'node:util'
import { VERSION } from '../version.js'
import { log, UsageError, type Values } from './command.js'
import { COMMANDS, loadCommand, loadCommands } from './commands.js'
import { help } from './help.js'

/** The exit code, or -1 for a command that keeps serving. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    process.stdout.write(help(await loadCommands()) + '\n')
    return first === undefined ? 1 : 0
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(VERSION + '\n')
    return 0
  }
  const command = await loadCommand(first)
  if (!command) {
    const near = closest(first, Object.keys(COMMANDS))
    log(`unknown command "${first}".${near ? ` Did you mean "${near}"?` : ''} Commands: ${Object.keys(COMMANDS).join(', ')}. See marginalia --help.`)
    return 2
  }
  if (rest.includes('-h') || rest.includes('--help')) {
    process.stdout.write(command.usage + '\n')
    return 0
  }
  let values: Values
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: command.positionals === true }))
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    const unknown = /Unknown option '-{1,2}([^']+)'/.exec(message)?.[1]
    const near = unknown === undefined ? undefined : closest(unknown, Object.keys(command.options))
    log(`${message}${near ? `. Did you mean --${near}?` : ''}\n\nUsage: ${command.usage.split('\n')[0]}`)
    return 2
  }
  try {
    await command.run(values, positionals)
    return command.oneShot ? Number(process.exitCode ?? 0) : -1 // servers keep running
  } catch (e) {
    log(e instanceof Error ? e.message : String(e))
    return e instanceof UsageError ? 2 : 1
  }
}

/** The candidate nearest to `word` (edit distance ≤ 2, or a prefix), if any. */
function closest(word: string, candidates: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j)
    for (let i = 1; i <= a.length; i++) {
      let prev = row[0]!
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const here = row[j]!
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
        prev = here
      }
    }
    return row[b.length]!
  }
  const scored = candidates.map((c) => ({ c, d: c.startsWith(word) ? 0 : distance(word, c) })).sort((x, y) => x.d - y.d)
  return scored[0] !== undefined && scored[0].d <= 2 ? scored[0].c : undefined
}
