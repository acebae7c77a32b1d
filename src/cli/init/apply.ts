/** Applying what init/agents.ts and init/remove.ts plan: merged texts per file, the manifest, removals. */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { manifestText, MANIFEST_FILE, readManifest, type Piece } from './agents.js'
import type { Removal } from './remove.js'

export interface PlannedChange {
  file: string
  before: string | undefined
  after: string
  what: string
}

/** The pieces merged file by file (two pieces in one file build on each other); files that would not change are left out. */
export function planPieces(pieces: readonly Piece[]): { changes: PlannedChange[]; notes: string[] } {
  const byFile = new Map<string, PlannedChange>()
  const notes: string[] = []
  for (const piece of pieces) {
    const current = byFile.get(piece.file)
    const before = current ? current.after : existsSync(piece.file) ? readFileSync(piece.file, 'utf8') : undefined
    const merged = piece.merge(before)
    if ('note' in merged) {
      notes.push(merged.note)
      continue
    }
    byFile.set(piece.file, { file: piece.file, before: current ? current.before : before, after: merged.text, what: current ? `${current.what}; ${piece.what}` : piece.what })
  }
  return { changes: [...byFile.values()].filter((c) => c.before !== c.after), notes }
}

/** Adds what was just written to `.marginalia/init.json` (created: files that did not exist). */
export function recordManifest(root: string, written: readonly { file: string; before: string | undefined }[]): void {
  if (written.length === 0) return
  const m = readManifest(root)
  for (const w of written) (w.before === undefined ? m.created : m.edited).push(path.resolve(w.file))
  const dir = path.join(root, '.marginalia')
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, MANIFEST_FILE), manifestText(m))
}

/** Shows each removal and (unless `dryRun`) carries it out; folders it leaves empty go too. Returns the report. */
export function applyRemoval(root: string, removals: readonly Removal[], dryRun: boolean): string {
  const lines: string[] = []
  const show = (file: string): string => {
    const r = path.relative(root, file)
    return r.startsWith('..') ? file : r
  }
  for (const r of removals) {
    lines.push(`${r.after === null ? 'delete' : 'change'} ${show(r.file)} — ${r.what}`)
    if (r.after !== null) {
      const after = r.after.split('\n')
      for (const l of r.before.split('\n')) if (!after.includes(l)) lines.push(`  - ${l}`)
    }
    if (dryRun) continue
    if (r.after === null) {
      unlinkSync(r.file)
      removeEmptyParents(path.dirname(r.file), 2)
    } else writeFileSync(r.file, r.after)
  }
  const manifest = path.join(root, '.marginalia', MANIFEST_FILE)
  if (!dryRun && existsSync(manifest)) unlinkSync(manifest)
  lines.push(removals.length === 0 ? 'nothing to remove: init wrote nothing here (or it is already removed).' : dryRun ? 'dry run: nothing removed.' : `removed Marginalia's part of ${removals.length} file${removals.length === 1 ? '' : 's'}. The framework set-up (e.g. the marginalia() plugin line) and the store (.marginalia/) stay.`)
  return lines.join('\n') + '\n'
}

function removeEmptyParents(dir: string, levels: number): void {
  for (let i = 0; i < levels; i++) {
    try {
      if (readdirSync(dir).length > 0) return
      rmdirSync(dir)
    } catch {
      return
    }
    dir = path.dirname(dir)
  }
}
