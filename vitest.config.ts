import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The framework fixture apps carry their starters' own tests and node_modules.
    exclude: [...configDefaults.exclude, 'test/fixtures/**'],
    testTimeout: 20_000,
    // Cleaning up a real npm install (the install and Next.js tests) can take a while on a busy machine.
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
})
