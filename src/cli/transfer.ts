/** `marginalia export` and `marginalia import`: move a whole store between a file and PostgreSQL. */
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs'
import { once } from 'node:events'
import readline from 'node:readline'
import path from 'node:path'
import { openPlace } from '../store/open.js'
import { exportStore, importStore, parseExport } from '../store/transfer.js'
import { VERSION } from '../version.js'
import { STORE_USAGE, storeFile, storeOption } from './args.js'
import { UsageError, log, type Command, type Values } from './command.js'
import { progressBar } from './progress.js'

export const exportCommand: Command = {
  oneShot: true,
  summary: 'Write the whole store (events and attachments) as JSON lines, to move it or back it up',
  usage: [
    'marginalia export [--store FILE|URL] [--out FILE]',
    '',
    'Writes the store as JSON lines: a header, the snapshot the history starts from (when the',
    'store no longer holds its events from rev 1), every attachment, then every event exactly as',
    'a line of store.events.jsonl. Safe while servers run (a consistent read). Progress goes to',
    'stderr; with no --out the lines go to stdout.',
    '',
    'Move a file store to PostgreSQL:',
    '  marginalia export --out inbox.jsonl',
    '  marginalia import --in inbox.jsonl --store postgres://user@host:5432/db',
    '',
    'Options:',
    `  -s, --store FILE|URL  the store to export: ${STORE_USAGE}`,
    '  -o, --out FILE        write here instead of stdout (written to FILE.partial, renamed when complete)',
  ].join('\n'),
  options: { ...storeOption, out: { type: 'string', short: 'o' } },
  run: runExport,
}

export const importCommand: Command = {
  oneShot: true,
  summary: 'Load a marginalia export into an empty store (a file or a PostgreSQL schema)',
  usage: [
    'marginalia import --in FILE|- [--store FILE|URL]',
    '',
    'Reads a file written by marginalia export (- for stdin), checks all of it (every line, every',
    'event in order, that the events replay into a store, every attachment against its sha256),',
    'then writes the attachments and the store in one step. The target must hold no store yet: an',
    'existing one is refused untouched (use another --store, or another ?schema= for PostgreSQL).',
    '',
    'Options:',
    '  -i, --in FILE|-       the export to read (- for stdin)',
    `  -s, --store FILE|URL  the store to create: ${STORE_USAGE}`,
  ].join('\n'),
  options: { ...storeOption, in: { type: 'string', short: 'i' } },
  run: runImport,
}

async function runExport(values: Values): Promise<void> {
  const store = storeFile(values)
  const out = values.out === undefined ? undefined : path.resolve(String(values.out))
  const { adapter, blobs } = await openPlace(store)
  const bar = progressBar()
  const partial = out === undefined ? undefined : `${out}.partial`
  const stream = partial === undefined ? process.stdout : createWriteStream(partial)
  const write = async (line: string): Promise<void> => {
    if (!stream.write(line + '\n')) await once(stream, 'drain')
  }
  try {
    const { header } = await exportStore(adapter, blobs, write, {
      version: VERSION,
      onProgress: (phase, done, total) => bar.update(phase, done, total),
    })
    bar.done()
    if (partial !== undefined && out !== undefined) {
      await new Promise<void>((resolve, reject) => stream.end((e?: Error | null) => (e ? reject(e) : resolve())))
      await fsp.rename(partial, out)
    }
    log(`exported ${adapter.location}: rev ${header.rev}, ${header.events} event(s)${header.snapshotRev !== null ? ` after a snapshot at rev ${header.snapshotRev}` : ''}, ${header.blobs} attachment(s)${out ? ` to ${out}` : ''}`)
  } catch (e) {
    bar.done()
    if (partial !== undefined) {
      stream.destroy()
      await fsp.rm(partial, { force: true })
    }
    throw e
  } finally {
    await adapter.dispose?.()
  }
}

async function runImport(values: Values): Promise<void> {
  if (values.in === undefined) throw new UsageError('--in is required: the file written by marginalia export (or - for stdin)')
  const source = String(values.in)
  const name = source === '-' ? 'stdin' : path.resolve(source)
  if (source !== '-') {
    await fsp.access(name).catch(() => {
      throw new UsageError(`--in: cannot read ${name}`)
    })
  }
  const input = source === '-' ? process.stdin : createReadStream(name, 'utf8')
  const bar = progressBar()
  const onProgress = (phase: string, done: number, total: number): void => bar.update(phase === 'events' ? 'checking' : phase, done, total)
  const parsed = await parseExport(readline.createInterface({ input, crlfDelay: Infinity }), name, { onProgress }).finally(() => bar.done())
  const store = storeFile(values)
  const { adapter, blobs } = await openPlace(store)
  try {
    const result = await importStore(adapter, blobs, parsed, {
      onProgress: (phase, done, total) => bar.update(phase === 'events' ? 'writing' : 'attachments', done, total),
    })
    bar.done()
    log(`imported ${name} into ${adapter.location}: rev ${result.rev}, ${result.events} event(s), ${result.blobs} attachment(s)`)
  } finally {
    bar.done()
    await adapter.dispose?.()
  }
}
