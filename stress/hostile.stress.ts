import { afterEach, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { openStore, StoreFileError } from '../src/index.js'
import { tempDir } from '../test/helpers/store.js'
import { populated } from '../test/e2e/reliability/lib/hostile.js'
import { report } from './report.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('hostile files: the snapshot cut at every byte, the log cut at every byte, a byte of noise at every position of the log', async () => {
  const { file, cleanup } = tempDir('marginalia-hostile-stress-')
  cleanups.push(cleanup)
  const log = path.join(path.dirname(file), 'store.events.jsonl')
  const { snapshotRev } = await populated(file)
  const snapshot = readFileSync(file)
  const logBytes = readFileSync(log)
  const figures = { snapshotCuts: 0, snapshotRefusedByName: 0, logCuts: 0, logCutsOpenedWithCompleteLines: 0, logNoise: 0, logNoiseRefusedByName: 0, logNoiseAccepted: 0 }
  for (let cut = 0; cut < snapshot.length; cut++) {
    writeFileSync(file, snapshot.subarray(0, cut))
    figures.snapshotCuts++
    const error = await openStore({ file }).then((s) => s.close().then(() => null), (e: unknown) => e)
    expect(error).toBeInstanceOf(StoreFileError)
    expect((error as Error).message).toContain(path.resolve(file))
    expect(readFileSync(file).equals(snapshot.subarray(0, cut))).toBe(true)
    figures.snapshotRefusedByName++
  }
  writeFileSync(file, snapshot)
  for (let cut = 0; cut <= logBytes.length; cut++) {
    writeFileSync(file, snapshot)
    writeFileSync(log, logBytes.subarray(0, cut))
    figures.logCuts++
    const store = await openStore({ file, pollIntervalMs: 0, watchFiles: false })
    expect(store.rev).toBe(snapshotRev + logBytes.subarray(0, cut).toString('utf8').split('\n').length - 1)
    await store.close()
    figures.logCutsOpenedWithCompleteLines++
  }
  // One byte replaced by noise: either the store refuses with an error naming the log (or, for an event that does not fit the state, the store file), or the line still parses as the same kind of event.
  for (let at = 0; at < logBytes.length; at += 3) {
    writeFileSync(file, snapshot)
    const noisy = Buffer.from(logBytes)
    noisy[at] = 0x7f
    writeFileSync(log, noisy)
    figures.logNoise++
    const outcome = await openStore({ file, pollIntervalMs: 0, watchFiles: false }).then(
      async (s) => {
        const rev = s.rev
        await s.close()
        return rev
      },
      (e: unknown) => e,
    )
    if (typeof outcome === 'number') {
      expect(outcome).toBeGreaterThanOrEqual(snapshotRev)
      figures.logNoiseAccepted++
    } else {
      expect(outcome).toBeInstanceOf(StoreFileError)
      expect([log, path.resolve(file)]).toContain((outcome as StoreFileError).file)
      figures.logNoiseRefusedByName++
    }
  }
  report('hostile/exhaustive-cuts', figures)
})
