import { describe, expect, it } from 'vitest'
import { openStore } from '../../../src/index.js'
import { testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { startMutator } from '../../helpers/mutator.js'

const cleanups = useCleanups()

describe('two processes, one store file', () => {
  it('loses no mutation and each process sees every event exactly once, in order', async () => {
    const { file } = testDir(cleanups)
    const setup = await openStore({ file })
    const session = await setup.createSession({ url: 'http://localhost:5173/' })
    await setup.close()

    const perProcess = 150 // each does 150 creates + 150 replies
    const expectedRev = 1 + 2 * 2 * perProcess
    const mutators = ['alpha', 'beta'].map((label) => startMutator(cleanups, file, session.id, perProcess, expectedRev, label))
    await Promise.all(mutators.map((m) => m.ready))
    for (const m of mutators) m.go()
    const [a, b] = await Promise.all(mutators.map((m) => m.report))

    const all = Array.from({ length: expectedRev - 1 }, (_, i) => i + 2)
    for (const report of [a!, b!]) {
      expect(report.openedAt).toBe(1)
      expect(report.rev).toBe(expectedRev)
      expect(report.seen).toEqual(all) // every event once, in rev order: its own and the other's
    }
    // They really overlapped: each waits halfway for the other to have written (test/fixtures/mutator.mjs), so the writers alternate at least twice
    const alphaAnnotations = new Set(a!.mine)
    const check0 = await openStore({ file })
    const writers = check0.changesSince(1).map((e) => ('annotationId' in e && alphaAnnotations.has(e.annotationId) ? 'a' : 'b'))
    await check0.close()
    const switches = writers.filter((w, i) => i > 0 && w !== writers[i - 1]).length
    expect(switches).toBeGreaterThanOrEqual(2)

    const check = await openStore({ file })
    cleanups.push(() => check.close())
    expect(check.rev).toBe(expectedRev)
    const annotations = check.getSession(session.id).annotations
    expect(annotations).toHaveLength(2 * perProcess)
    for (const ann of annotations) expect(ann.replies).toHaveLength(1)
    const ids = new Set(annotations.map((x) => x.id))
    for (const id of [...a!.mine, ...b!.mine]) expect(ids.has(id)).toBe(true)
  })
})
