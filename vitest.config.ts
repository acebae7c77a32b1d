import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Three projects, split by what a test costs (`test/structure`'s layout test keeps each file where
 * it belongs):
 * - `unit` (test/unit/, mirroring src/): in-process only — no build, no browser, no child process,
 *   no database. `npm run test:fast` runs it alone.
 * - `browser` (test/browser/): drives Debian's Chromium; builds dist/ first when it is stale.
 * - `e2e` (test/e2e/): the built package, processes, npm installs, PostgreSQL, the framework apps;
 *   the security, reliability and team scenarios.
 * `npm test` (build, lint, typecheck, fixtures, all three) is the whole gate.
 */
const built = { globalSetup: ['test/global-setup.ts'] }

export default defineConfig({
  test: {
    // The framework fixture apps carry their starters' own tests and node_modules.
    exclude: [...configDefaults.exclude, 'test/fixtures/**'],
    testTimeout: 20_000,
    // Cleaning up a real npm install (the install and Next.js tests) can take a while on a busy machine.
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // In-process tests share their workers' module cache (isolate: false): most of a file's cost is importing the code.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], pool: 'threads', isolate: false } },
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], ...built } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], ...built } },
    ],
  },
})
