/** `marginalia reset`: empty the inbox safely, while servers and agents keep running. */
import { existsSync, mkdirSync, renameSync } from 'node:fs'
import path from 'node:path'
import readline from 'node:readline/promises'
import { openStore } from '../store/index.js'
import { STORE_USAGE, isDatabaseUrl, storeFile, storeOption } from './args.js'
import { UsageError, log, type Command, type Values } from './command.js'
import { closeStore } from './lifecycle.js'

export const reset: Command = {
  oneShot: true,
  summary: 'Delete every annotation (the supported way to empty the inbox; safe while servers run)',
  usage: [
    'marginalia reset [--yes] [--store FILE|URL]',
    'marginalia reset --move-aside [--yes] [--store FILE]',
    '',
    'Deletes every annotation in one transaction: running servers, agents and open pages see them',
    'go at once (one annotation.deleted event each), and revs go on, so live streams need no',
    'restart. Sessions (the pages) stay. Then removes attachments nothing references any more',
    '(older than an hour). Asks to confirm in a terminal; --yes skips the question (needed in',
    'scripts). Do not delete .marginalia/ by hand while Marginalia runs: a running process still',
    'holds the store and writes it back.',
    '',
    '--move-aside is for a file store that cannot be opened (damaged by hand or by a crash of',
    'another tool): its files go to <store dir>/broken-<time>/ and the next start begins empty.',
    'Stop the processes that use it first.',
    '',
    'Options:',
    '  -y, --yes             do not ask',
    '      --move-aside      move an unopenable file store aside instead',
    `  -s, --store FILE|URL  ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, yes: { type: 'boolean', short: 'y' }, 'move-aside': { type: 'boolean' } },
  run,
}

async function run(values: Values): Promise<void> {
  const file = storeFile(values)
  if (values['move-aside']) return moveAside(file, values.yes === true)
  let store
  try {
    store = await openStore({ file, onError: (e) => log(e instanceof Error ? e.message : String(e)) })
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    throw new Error(isDatabaseUrl(file) ? message : `${message}\nTo start over with an empty store, stop the processes that use it and run: marginalia reset --move-aside${values.store ? ` --store ${String(values.store)}` : ''}`)
  }
  try {
    const annotations = store.listAnnotations({})
    const pending = annotations.filter((a) => a.status === 'pending').length
    if (annotations.length === 0) {
      log(`${store.location} has no annotations; nothing to reset`)
      return
    }
    const what = `${annotations.length} annotation(s) (${pending} pending) in ${store.location}`
    if (!(await confirm(`Delete all ${what}? Type "yes" to confirm: `, values.yes === true))) {
      log('not confirmed; nothing was deleted')
      process.exitCode = 1
      return
    }
    const { deleted } = await store.clearAnnotations()
    const gc = await store.gcAttachments()
    log(`deleted ${deleted} annotation(s); the store goes on at rev ${store.rev} (running servers and agents saw them go)${gc.removed.length > 0 ? `; removed ${gc.removed.length} unreferenced attachment(s)` : ''}`)
  } finally {
    await closeStore(store)
  }
}

async function confirm(question: string, yes: boolean): Promise<boolean> {
  if (yes) return true
  if (!process.stdin.isTTY) throw new UsageError('reset deletes every annotation: pass --yes to confirm when not in a terminal')
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
  try {
    return (await rl.question(question)).trim().toLowerCase() === 'yes'
  } finally {
    rl.close()
  }
}

/** Move an unopenable file store's files into broken-<time>/ beside them. */
async function moveAside(file: string, yes: boolean): Promise<void> {
  if (isDatabaseUrl(file)) throw new UsageError('--move-aside is for a file store; for PostgreSQL, name another schema (?schema=) or restore a backup')
  const dir = path.dirname(file)
  const names = [path.basename(file), path.basename(file).replace(/\.json$/, '') + '.events.jsonl'].filter((n) => existsSync(path.join(dir, n)))
  if (names.length === 0) {
    log(`no store files at ${file}; nothing to move`)
    return
  }
  const opens = await openStore({ file }).then(
    async (s) => {
      await s.close()
      return true
    },
    () => false,
  )
  if (opens) throw new UsageError(`${file} opens fine; to empty it run marginalia reset (without --move-aside), which is safe while servers run`)
  if (!(await confirm(`Move ${names.join(' and ')} aside (the next start begins with an empty store)? Type "yes" to confirm: `, yes))) {
    log('not confirmed; nothing was moved')
    process.exitCode = 1
    return
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const target = path.join(dir, `broken-${stamp}`)
  mkdirSync(target, { recursive: true })
  for (const n of names) renameSync(path.join(dir, n), path.join(target, n))
  log(`moved ${names.join(', ')} to ${target}; the next start begins with an empty store (attachments and the archive stay where they are)`)
}
