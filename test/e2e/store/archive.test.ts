import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { openStore, type StoreEvent } from '../../../src/index.js'
import { parseDuration } from '../../../src/cli/args.js'
import { listArchive } from '../../../src/store/archive/directory.js'
import { counterIds, tempDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const DAY = 86_400_000

async function seeded() {
  const t = tempDir()
  cleanups.push(t.cleanup)
  let now = Date.UTC(2026, 0, 1)
  const store = await openStore({ file: t.file, clock: () => new Date(now), ids: counterIds() })
  cleanups.push(() => store.close())
  const s = await store.createSession({ url: 'http://localhost:5173/' })
  const add = (comment: string) => store.addAnnotation({ sessionId: s.id, comment })
  const oldPending = await add('old pending')
  const oldAcked = await add('old acknowledged')
  await store.acknowledge(oldAcked.id)
  const oldResolved = await add('old resolved')
  await store.resolve(oldResolved.id, { summary: 'fixed it' })
  const oldDismissed = await add('old dismissed')
  await store.dismiss(oldDismissed.id, { reason: 'by design' })
  now += 10 * DAY
  const recentResolved = await add('recent resolved')
  await store.resolve(recentResolved.id)
  now += DAY
  return { ...t, store, s, oldPending, oldAcked, oldResolved, oldDismissed, recentResolved, setNow: (t: number) => (now = t) }
}

describe('archive', () => {
  it('moves exactly the finished annotations older than the cut-off, with their replies', async () => {
    const { dir, store, s, oldPending, oldAcked, oldResolved, oldDismissed, recentResolved } = await seeded()
    const events: StoreEvent[] = []
    store.changes$.subscribe((e) => events.push(e))
    const rev = store.rev
    const result = await store.archive({ olderThanMs: 7 * DAY })
    expect(result).toMatchObject({ archived: 2, completedEarlierRun: 0, ids: [oldResolved.id, oldDismissed.id] })
    expect(store.rev).toBe(rev + 2)
    expect(events.map((e) => [e.type, 'annotationId' in e ? e.annotationId : ''])).toEqual([
      ['annotation.archived', oldResolved.id],
      ['annotation.archived', oldDismissed.id],
    ])
    expect(store.getSession(s.id).annotations.map((a) => a.id)).toEqual([oldPending.id, oldAcked.id, recentResolved.id])

    const archiveDir = path.join(dir, '.marginalia', 'archive')
    expect(readdirSync(archiveDir)).toEqual(['2026-01-12.jsonl'])
    const lines = readFileSync(path.join(archiveDir, '2026-01-12.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.map((l) => l.annotation.id)).toEqual([oldResolved.id, oldDismissed.id])
    expect(lines[0].annotation.replies).toMatchObject([{ author: 'agent', message: 'fixed it' }])
    expect(lines[0].archivedAt).toBe('2026-01-12T00:00:00.000Z')
    expect(listArchive(archiveDir)).toMatchObject([{ annotations: 2 }])
  })

  it('re-running changes nothing', async () => {
    const { dir, store } = await seeded()
    await store.archive({ olderThanMs: 7 * DAY })
    const file = path.join(dir, '.marginalia', 'archive', '2026-01-12.jsonl')
    const bytes = readFileSync(file)
    const rev = store.rev
    const again = await store.archive({ olderThanMs: 7 * DAY })
    expect(again).toMatchObject({ archived: 0, ids: [] })
    expect(store.rev).toBe(rev)
    expect(readFileSync(file)).toEqual(bytes)
  })

  it('survives a kill between writing the archive and leaving the store; the next run completes the move', async () => {
    const { file, dir, store, oldResolved, oldDismissed } = await seeded()
    await store.close()
    const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../../fixtures/archiver.mjs'), file, String(7 * DAY)], { stdio: ['ignore', 'pipe', 'inherit'] })
    cleanups.push(() => child.kill('SIGKILL'))
    const [, signal] = await once(child, 'exit')
    expect(signal).toBe('SIGKILL')

    // The fixture runs with the real clock: every finished annotation (all dated 2026-01) is due.
    const archiveDir = path.join(dir, '.marginalia', 'archive')
    const [name] = readdirSync(archiveDir)
    const archived = () => readFileSync(path.join(archiveDir, name!), 'utf8').trim().split('\n').map((l) => JSON.parse(l).annotation.id as string)
    const inArchive = archived()
    expect(inArchive).toContain(oldResolved.id)

    // The killed process died holding the store lock: it is recovered once stale (2 s here, 5 s by default).
    const reopened = await openStore({ file, lockStaleMs: 2_000 })
    cleanups.push(() => reopened.close())
    for (const id of inArchive) expect(reopened.getAnnotation(id)).toBeDefined() // in both places, for now

    const bytes = readFileSync(path.join(archiveDir, name!))
    const done = await reopened.archive({ olderThanMs: 7 * DAY })
    expect(done.completedEarlierRun).toBe(inArchive.length)
    expect(done.ids.sort()).toEqual([...inArchive].sort())
    expect(readFileSync(path.join(archiveDir, name!))).toEqual(bytes) // no duplicate lines
    for (const id of [oldResolved.id, oldDismissed.id]) expect(() => reopened.getAnnotation(id)).toThrow(/No annotation/)
    expect(archived()).toEqual(inArchive)
  })

  it('parses durations', () => {
    expect(parseDuration('7d')).toBe(7 * DAY)
    expect(parseDuration('12h')).toBe(12 * 3_600_000)
    expect(parseDuration('0')).toBe(0)
    expect(() => parseDuration('soon')).toThrow(/not a duration/)
    expect(() => parseDuration('5')).toThrow(/needs a unit/)
  })
})
