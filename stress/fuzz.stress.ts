import { expect, it } from 'vitest'
import { fuzzInProcess, fuzzStdio } from '../test/e2e/reliability/lib/fuzz-run.js'
import { report } from './report.js'

const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)

it('fuzz: 100 000 cases in-process', async () => {
  const t0 = Date.now()
  const figures = await fuzzInProcess({ seed, cases: 100_000 })
  report('fuzz/in-process', { seed, ...figures, ms: Date.now() - t0 })
  expect(figures.cases).toBe(100_000)
})

it('fuzz: 5 000 cases over the built CLI’s stdio', async () => {
  const t0 = Date.now()
  const figures = await fuzzStdio({ seed: seed + 1, cases: 5_000 })
  report('fuzz/stdio', { seed: seed + 1, ...figures, ms: Date.now() - t0 })
  expect(figures.cases).toBe(5_000)
})
