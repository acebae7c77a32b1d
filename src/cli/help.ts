/** `marginalia --help`: the commands, one line each. */
import { VERSION } from '../version.js'
import type { Command } from './command.js'

export function help(commands: Readonly<Record<string, Command>>): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length))
  return [
    `marginalia ${VERSION} — annotate a running web app; an AI agent answers over MCP.`,
    '',
    'Usage: marginalia <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    '  -h, --help       show help (also: marginalia <command> --help)',
    '  -v, --version    print the version',
  ].join('\n')
}
