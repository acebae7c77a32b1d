/** Store files in known states, for the hostile-files tests and their stress version. */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { openStore } from '../../../../src/index.js'
import { deterministic } from '../../../helpers/store.js'

/** A store with a snapshot (after close) and a few events in the log after it. */
export async function populated(file: string): Promise<{ sessionId: string; rev: number; snapshotRev: number }> {
  const first = await openStore({ file, ...deterministic() })
  const session = await first.createSession({ url: 'http://localhost:5173/' })
  for (let i = 0; i < 6; i++) await first.addAnnotation({ sessionId: session.id, comment: `note ${i} ✓` })
  await first.close() // compacts: the snapshot holds everything so far
  const snapshotRev = first.rev
  const second = await openStore({ file, compactMinBytes: 1e9, ...deterministic({ clock: () => new Date(Date.UTC(2026, 1, 1)) }) })
  for (let i = 0; i < 5; i++) await second.reply(second.listAnnotations()[i]!.id, { author: 'human', message: `reply ${i}` })
  const rev = second.rev
  // Keep the files as they are now (every mutation is durable), with lines in the log: close()
  // would compact them into the snapshot, so put the bytes back afterwards.
  const files = filesOf(path.dirname(file))
  await second.close()
  for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(path.dirname(file), name), bytes)
  return { sessionId: session.id, rev, snapshotRev }
}

/** Every file in the store's directory, with its bytes. */
export function filesOf(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {}
  if (!existsSync(dir)) return out
  for (const name of readdirSync(dir)) if (!name.endsWith('.lock')) out[name] = readFileSync(path.join(dir, name))
  return out
}

