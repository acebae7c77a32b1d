import { expect, it } from 'vitest'
import { fileStoreProperty, memoryStoreProperty } from '../test/e2e/reliability/lib/state-machine-props.js'
import { report } from './report.js'

const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)

it('state machine, memory store: 1 000 programs of up to 80 commands', async () => {
  const t0 = Date.now()
  const figures = await memoryStoreProperty({ seed, numRuns: 1_000, maxCommands: 80 })
  report('state-machine/memory', { seed, ...figures, ms: Date.now() - t0 })
  expect(figures.runs).toBe(1_000)
})

it('state machine, file store: 150 programs of up to 60 commands, each reopened', async () => {
  const t0 = Date.now()
  const figures = await fileStoreProperty({ seed: seed + 1, numRuns: 150, maxCommands: 60 })
  report('state-machine/file', { seed: seed + 1, ...figures, ms: Date.now() - t0 })
  expect(figures.reopens).toBe(150)
})
