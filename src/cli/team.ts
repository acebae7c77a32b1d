/**
 * `marginalia people`, `marginalia agents`, `marginalia revoke`: the operator adds
 * people (who get a one-time sign-in link) and agents (who get a bearer token), lists them and
 * revokes them. Secrets are printed once, on stdout, and stored only as hashes; everything else
 * goes to stderr. Works on the store directly, with or without a server running on it.
 */
import { openStore } from '../store/index.js'
import type { Identity, Role } from '../store/model.js'
import type { Store } from '../store/store.js'
import { addAgent, addPerson, findIdentity, newSignInLink } from '../auth/identities.js'
import { NotFoundError } from '../store/errors.js'
import { STORE_USAGE, storeFile, storeOption } from './args.js'
import { log, UsageError, type Command, type Values } from './command.js'
import { closeStore } from './lifecycle.js'
import { DEFAULT_PORT } from '../http/defaults.js'

const PUBLIC_URL_USAGE = `      --public-url URL   the server's address as people reach it, for the link (default $MARGINALIA_PUBLIC_URL, else http://127.0.0.1:${DEFAULT_PORT})`

async function withStore<T>(values: Values, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ file: storeFile(values) })
  try {
    return await fn(store)
  } finally {
    await closeStore(store)
  }
}

function publicUrl(values: Values): string {
  const raw = (values['public-url'] as string | undefined) ?? (process.env.MARGINALIA_PUBLIC_URL || `http://127.0.0.1:${DEFAULT_PORT}`)
  try {
    const url = new URL(raw)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
    return url.toString().replace(/\/+$/, '')
  } catch {
    throw new UsageError(`--public-url must be an http(s) URL like https://marginalia.example.com (got "${raw}")`)
  }
}

function table(identities: Identity[]): string {
  if (identities.length === 0) return 'nobody yet\n'
  return identities.map((i) => [i.id, i.name, i.role, i.createdAt, i.revokedAt ? `revoked ${i.revokedAt}` : 'active'].join('\t')).join('\n') + '\n'
}

/** The one NAME (or NAME|ID) a command takes; the error says what it got and shows the command with one. */
function oneName(positionals: string[], what: string, example: string): string {
  if (positionals.length !== 1 || positionals[0]!.trim() === '') {
    const got = positionals.length === 0 ? 'none' : positionals.length === 1 ? 'an empty one' : `${positionals.length}: ${positionals.map((p) => `"${p}"`).join(' ')}`
    throw new UsageError(`${what} needs exactly one NAME (got ${got}); quote a name with spaces, e.g. marginalia ${what} ${example}`)
  }
  return positionals[0]!
}

/** A person or an agent by name or id; unknown → an error that says how to see who there is. */
function find(store: Store, who: string): Identity {
  try {
    return findIdentity(store, who)
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e
    const known = store.identities.list().filter((i) => i.revokedAt === undefined)
    throw new Error(`Nobody is named "${who}" or has that id in this store (${known.length === 0 ? 'nobody was added yet' : `${known.length} active: ${known.slice(0, 5).map((i) => i.name).join(', ')}${known.length > 5 ? ', …' : ''}`}). See marginalia people list and marginalia agents list (with the same --store).`)
  }
}

export const people: Command = {
  oneShot: true,
  positionals: true,
  summary: 'Add people (they get a one-time sign-in link), list them, or give one a new link',
  usage: [
    'marginalia people add NAME [--role person|admin] [--public-url URL] [--store FILE]',
    'marginalia people link NAME|ID [--public-url URL] [--store FILE]',
    'marginalia people list [--store FILE]',
    '',
    'add prints a sign-in link (valid 24 h, single use) on stdout: send it to the person. Opening it',
    'signs them in on the server; from then on the overlay on an allowed app origin (serve',
    '--allow-origin) signs in with one click. A person creates annotations, replies, reopens,',
    'answers questions and deletes their own annotations; an admin can do everything.',
    'link prints a new sign-in link for someone already added. Secrets are stored as hashes only.',
    '',
    'Options:',
    '      --role ROLE        person (default) or admin',
    PUBLIC_URL_USAGE,
    `  -s, --store FILE       ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, role: { type: 'string' }, 'public-url': { type: 'string' } },
  async run(values, positionals) {
    const [action, ...rest] = positionals
    if (action === 'list') {
      await withStore(values, async (store) => process.stdout.write(table(store.identities.list().filter((i) => i.kind === 'person'))))
      return
    }
    if (action === 'add') {
      const name = oneName(rest, 'people add', '"Alice Martin"')
      const role = (values.role as string | undefined) ?? 'person'
      if (role !== 'person' && role !== 'admin') throw new UsageError(`--role must be person or admin (got "${role}"); agents are added with marginalia agents add NAME`)
      const url = publicUrl(values)
      const { identity, link, expiresAt } = await withStore(values, (store) => addPerson(store, name, { role: role as Role, publicUrl: url }))
      log(`added ${identity.name} (${identity.id}, ${identity.role}); the sign-in link below works once, until ${expiresAt}:`)
      process.stdout.write(`${link}\n`)
      return
    }
    if (action === 'link') {
      const who = oneName(rest, 'people link', '"Alice Martin"')
      const url = publicUrl(values)
      const { link, expiresAt } = await withStore(values, async (store) => {
        const identity = find(store, who)
        if (identity.kind !== 'person') throw new UsageError(`${identity.name} is an agent: agents use tokens, not sign-in links (revoke it and marginalia agents add a new one for a new token)`)
        if (identity.revokedAt !== undefined) throw new UsageError(`${identity.name} was revoked at ${identity.revokedAt}: a revoked person gets no new link; add them again with marginalia people add NAME`)
        return newSignInLink(store, identity.id, { publicUrl: url })
      })
      log(`a new sign-in link for ${who}; it works once, until ${expiresAt}:`)
      process.stdout.write(`${link}\n`)
      return
    }
    throw new UsageError(`people needs add, link or list (got ${action === undefined ? 'nothing' : `"${action}"`}). See marginalia people --help.`)
  },
}

export const agents: Command = {
  oneShot: true,
  positionals: true,
  summary: 'Add agents (each gets a bearer token, printed once) or list them',
  usage: [
    'marginalia agents add NAME [--store FILE]',
    'marginalia agents list [--store FILE]',
    '',
    'add prints a bearer token once, on stdout; it is stored as a hash only. The agent sends it as',
    '"Authorization: Bearer <token>" to /mcp and the REST API, e.g.',
    '  claude mcp add --transport http marginalia https://marginalia.example.com/mcp --header "Authorization: Bearer <token>"',
    'Its changes and replies carry its name. Revoke it with marginalia revoke NAME.',
    '',
    'Options:',
    `  -s, --store FILE       ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption },
  async run(values, positionals) {
    const [action, ...rest] = positionals
    if (action === 'list') {
      await withStore(values, async (store) => process.stdout.write(table(store.identities.list().filter((i) => i.kind === 'agent'))))
      return
    }
    if (action === 'add') {
      const name = oneName(rest, 'agents add', 'ci-agent')
      const { identity, token } = await withStore(values, (store) => addAgent(store, name))
      log(`added agent ${identity.name} (${identity.id}); its token is below and is shown only now:`)
      process.stdout.write(`${token}\n`)
      return
    }
    throw new UsageError(`agents needs add or list (got ${action === undefined ? 'nothing' : `"${action}"`}). See marginalia agents --help.`)
  },
}

export const revoke: Command = {
  oneShot: true,
  positionals: true,
  summary: 'Revoke a person or an agent: their tokens and sessions stop working at once',
  usage: [
    'marginalia revoke NAME|ID [--store FILE]',
    '',
    'Every credential of theirs (sign-in links, sessions, agent token) stops working; a running',
    'server answers their next request with 401 and closes their open event and MCP streams.',
    'Their past changes keep their name. The revocation is an event in the store\'s log.',
    '',
    'Options:',
    `  -s, --store FILE       ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption },
  async run(values, positionals) {
    const who = oneName(positionals, 'revoke', 'ci-agent')
    const identity = await withStore(values, async (store) => store.identities.revoke(find(store, who).id))
    log(`revoked ${identity.kind} ${identity.name} (${identity.id}) at ${identity.revokedAt}`)
  },
}
