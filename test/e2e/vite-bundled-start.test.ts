/**
 * The Vite plugin from the built package starts its server in a worker thread from the bundle
 * (dist/integrations/vite/vite-worker.mjs: a few files, the tools' schemas precomputed), not from the hundreds of
 * modules under dist/http and dist/store (the server, the store, the tools), and not on the main
 * thread the dev server starts on. A real Vite dev server with the built plugin, in a child
 * process whose module loads are recorded by a resolve hook (in every thread); the server it
 * started answers /health, and closing the dev server closes it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { useCleanups } from '../helpers/cleanup.js'
import { freePort } from '../helpers/framework-app.js'
import { spawnNode } from '../helpers/process.js'
import { testDir } from '../helpers/store.js'

const cleanups = useCleanups()
const ROOT = path.resolve(import.meta.dirname, '../..')
const DIST = path.join(ROOT, 'dist')
/** Vite's ESM entry in this repository's node_modules (the app in the temporary folder has none). */
const VITE = path.join(ROOT, 'node_modules', 'vite', 'dist', 'node', 'index.js')

describe('the built Vite plugin', () => {
  it('starts its server in a worker from dist/integrations/vite/vite-worker.mjs, not from the server modules one by one, and closes it with the dev server', { timeout: 60_000 }, async () => {
    const { dir } = testDir(cleanups)
    mkdirSync(path.join(dir, 'app'))
    writeFileSync(path.join(dir, 'app', 'index.html'), '<!doctype html><html><head><title>app</title></head><body><h1>app</h1></body></html>\n')
    const loads = path.join(dir, 'loads.txt')
    // Records every module URL Node resolves in the child (the hook runs off its main thread).
    writeFileSync(path.join(dir, 'hooks.mjs'), `import { appendFileSync } from 'node:fs'\nexport async function resolve(specifier, context, next) {\n  const r = await next(specifier, context)\n  appendFileSync(${JSON.stringify(loads)}, r.url + '\\n')\n  return r\n}\n`)
    writeFileSync(path.join(dir, 'register.mjs'), `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)})\n`)
    const port = await freePort()
    writeFileSync(
      path.join(dir, 'dev.mjs'),
      `import { createServer } from ${JSON.stringify(pathToFileURL(VITE).href)}
import marginalia from ${JSON.stringify(pathToFileURL(path.join(DIST, 'integrations', 'vite', 'index.js')).href)}
const plugin = marginalia({ port: ${port}, store: ${JSON.stringify(path.join(dir, 'store.json'))} })
const server = await createServer({ root: ${JSON.stringify(path.join(dir, 'app'))}, configFile: false, logLevel: 'silent', server: { host: '127.0.0.1', port: 0 }, plugins: [plugin] })
await server.listen()
const state = await plugin.ready()
const health = await fetch(state.url + '/health')
await server.close()
const after = await fetch(state.url + '/health').then((r) => r.status, () => 'closed')
console.log(JSON.stringify({ mode: state.mode, health: health.status, after }))
`,
    )
    const dev = spawnNode(cleanups, ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, path.join(dir, 'dev.mjs')], { cwd: ROOT })
    expect(await dev.exited(50_000), dev.stderr()).toBe(0)
    expect(JSON.parse(dev.stdout().trim().split('\n').at(-1)!)).toEqual({ mode: 'started', health: 200, after: 'closed' })
    const loaded = readFileSync(loads, 'utf8').split('\n').filter((u) => u.startsWith(pathToFileURL(DIST).href))
    expect(loaded).toContain(pathToFileURL(path.join(DIST, 'integrations', 'vite', 'vite-worker.mjs')).href)
    for (const module of ['http/app.js', 'http/mcp.js', 'mcp/server.js', 'store/open.js', 'store/store.js', 'tools/registry.js']) expect(loaded, module).not.toContain(pathToFileURL(path.join(DIST, module)).href)
  })
})
