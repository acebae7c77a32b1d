/**
 * The manifest of an `'ids'` build: each `data-mid` id with the file:line it stands for, which
 * `marginalia serve --sources` reads. A module of its own, light, so the build plugins name and
 * write it without loading the source marking (its parser) or unplugin.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** Its default file name, in the project root. */
export const MANIFEST_FILE = 'marginalia-sources.json'

/** Write `ids` (id → file:line) to `file`, sorted by id. */
export function writeManifest(file: string, ids: Map<string, string>): void {
  mkdirSync(path.dirname(file), { recursive: true })
  const sorted = Object.fromEntries([...ids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  writeFileSync(file, `${JSON.stringify({ version: 1, sources: sorted }, null, 2)}\n`)
}
