/**
 * A Marginalia HTTP server with the conformance fixtures added (test-only). Prints its URL on
 * stdout and runs until SIGTERM. Used by `npm run conformance`.
 */
import { createMemoryStore, startHttpServer } from '../../src/index.js'
import { FIXTURE_TOOLS, addFixtureResourcesAndPrompts } from './fixtures.js'

const store = createMemoryStore()
const server = await startHttpServer(store, {
  port: 0,
  staticDir: null,
  tools: { plugins: FIXTURE_TOOLS },
  extendServer: addFixtureResourcesAndPrompts,
  log: (m) => process.stderr.write(`fixture-server: ${m}\n`),
})
process.stdout.write(`${server.url}\n`)
process.on('SIGTERM', () => {
  void server.close().then(() => store.close()).then(() => process.exit(0))
})
