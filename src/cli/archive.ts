/** `marginalia archive`: move finished annotations out of the live store. */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { DEFAULT_ARCHIVE_AGE_MS, listArchive, openStore } from '../store/index.js'
import { parseDuration, STORE_USAGE, storeFile, storeOption } from './args.js'
import { UsageError, type Command, type Values } from './command.js'
import { closeStore } from './lifecycle.js'

export const archive: Command = {
  oneShot: true,
  summary: 'Move finished annotations out of the live store into .marginalia/archive/',
  usage: [
    'marginalia archive [--older-than 7d] [--store FILE]',
    'marginalia archive --list [--store FILE]',
    '',
    'Moves resolved and dismissed annotations last changed before the cut-off into',
    '<store dir>/archive/YYYY-MM-DD.jsonl (one JSON line per annotation, with its replies).',
    'Safe to re-run: an interrupted run is completed by the next one, nothing is duplicated.',
    'Then removes attachment files (<store dir>/attachments/) that no annotation, reply or archived',
    'annotation references and that are older than 10 minutes (orphans of an interrupted upload).',
    '',
    'Options:',
    '      --older-than D  cut-off age: 30m, 12h, 7d, 2w, or 0 for every finished one (default 7d)',
    '      --list          list the archive files instead',
    `  -s, --store FILE    ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, 'older-than': { type: 'string' }, list: { type: 'boolean' } },
  run,
}

async function run(values: Values): Promise<void> {
  const file = storeFile(values)
  const directory = path.join(path.dirname(file), 'archive')
  if (values.list) {
    const files = listArchive(directory)
    if (files.length === 0) process.stdout.write(`No archive yet in ${directory}\n`)
    for (const f of files) process.stdout.write(`${f.file}\t${f.annotations} annotation(s)\t${f.bytes} bytes\n`)
    return
  }
  let olderThanMs = DEFAULT_ARCHIVE_AGE_MS
  if (values['older-than'] !== undefined) {
    try {
      olderThanMs = parseDuration(String(values['older-than']))
    } catch (e) {
      throw new UsageError(`--older-than: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  const store = await openStore({ file })
  try {
    const result = await store.archive({ olderThanMs, directory })
    if (result.archived === 0) process.stdout.write('Nothing to archive.\n')
    else {
      const earlier = result.completedEarlierRun > 0 ? ` (${result.completedEarlierRun} completed from an interrupted run)` : ''
      process.stdout.write(`Archived ${result.archived} annotation(s)${earlier}${result.file ? ` to ${result.file}` : ''}.\n`)
    }
    const gc = await store.gcAttachments({ alsoReferenced: archivedAttachments(directory) })
    if (gc.removed.length > 0) process.stdout.write(`Removed ${gc.removed.length} unreferenced attachment(s).\n`)
  } finally {
    await closeStore(store)
  }
}

/** The attachment sha256s archived annotations still reference (kept by the gc). */
export function archivedAttachments(directory: string): Set<string> {
  const out = new Set<string>()
  let names: string[]
  try {
    names = readdirSync(directory)
  } catch {
    return out
  }
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue
    for (const m of readFileSync(path.join(directory, name), 'utf8').matchAll(/"sha256":"([0-9a-f]{64})"/g)) out.add(m[1]!)
  }
  return out
}
