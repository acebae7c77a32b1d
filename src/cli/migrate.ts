/** `marginalia migrate --store postgres://…`: create or migrate the PostgreSQL schema explicitly (for operators). */
import { UsageError, log, type Command, type Values } from './command.js'
import { storeFile, storeOption } from './args.js'
import { POSTGRES_LOCATION, locationOf } from '../store/locations.js'

export const migrate: Command = {
  oneShot: true,
  summary: 'Create or migrate the PostgreSQL store schema (servers also do this on first use)',
  usage: [
    'marginalia migrate --store postgres://user@host:5432/db[?schema=name]',
    '',
    'Applies the versioned migrations under an advisory lock (safe while servers run; two at once',
    'migrate once) and prints the schema version. A schema written by a newer Marginalia is refused',
    'and left untouched. The URL may also come from $MARGINALIA_STORE or $DATABASE_URL.',
    '',
    'Options:',
    '  -s, --store URL     postgres:// connection URL (?schema=name; default schema marginalia)',
  ].join('\n'),
  options: { ...storeOption },
  run,
}

async function run(values: Values): Promise<void> {
  const url = storeFile(values)
  if (locationOf(url) !== POSTGRES_LOCATION) throw new UsageError(`--store must be a postgres:// URL for migrate (got a file: ${url}); a file store needs no migration`)
  const { PostgresAdapter } = await import('../store/postgres/postgres-adapter.js')
  const adapter = new PostgresAdapter({ url })
  try {
    const result = await adapter.migrate()
    log(result.from === result.to ? `${adapter.location} is at schema version ${result.to}; nothing to do` : `${adapter.location} migrated from schema version ${result.from} to ${result.to}`)
  } finally {
    await adapter.dispose()
  }
}
