import { defineConfig } from 'vitest/config'

/** `npm run stress`: the heavy versions of the reliability tests, one file at a time. */
export default defineConfig({
  test: {
    include: ['stress/**/*.stress.ts'],
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/global-setup.ts'],
  },
})
