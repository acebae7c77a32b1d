/** docs/reference/cli.md: `marginalia --help` and every command's own `--help`, from the command table (src/cli/commands.ts). */
import { loadCommands } from '../../src/cli/commands.js'
import { help } from '../../src/cli/help.js'
import { VERSION } from '../../src/version.js'
import { code, fenced, page, table, type ReferencePage } from './markdown.js'

/** The help text without the version, which changes with every release and says nothing about the commands. */
function withoutVersion(text: string): string {
  return text.replace(`marginalia ${VERSION} —`, 'marginalia —')
}

const COMMANDS = await loadCommands()

export function cliPage(): ReferencePage {
  return page(
    'docs/reference/cli.md',
    'Command line',
    'the commands\' own help texts (`src/cli/commands.ts` and one file per command in `src/cli/`)',
    [
      [
        'Run it as `npx --no-install marginalia <command>` in a project that installed the package (the name `marginalia` on the npm',
        'registry may belong to someone else: `--no-install` keeps npx from downloading it), or `node dist/marginalia.mjs <command>` in a clone.',
        'A mistyped command or option gets a "did you mean"; usage errors exit with code 2, other failures with 1.',
        'Every flag and environment variable in one table: [configuration](configuration.md).',
      ].join('\n'),
      table(
        ['command', 'what it does'],
        Object.entries(COMMANDS).map(([name, c]) => [`[${code(`marginalia ${name}`)}](#marginalia-${name})`, c.summary]),
      ),
      ['## marginalia --help', '', fenced(withoutVersion(help(COMMANDS)))].join('\n'),
      ...Object.entries(COMMANDS).map(([name, c]) => [`## marginalia ${name}`, '', `${c.summary}.`, '', fenced(c.usage)].join('\n')),
    ],
  )
}
