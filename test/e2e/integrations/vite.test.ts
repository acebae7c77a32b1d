/**
 * The Vite plugin with a real Vite dev server (and a real production build): it injects the
 * overlay into dev pages only, starts or reuses the Marginalia server, keeps it through a Vite
 * restart, and closes it with Vite.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { build, createServer, type ViteDevServer } from 'vite'
import marginalia, { testing, type MarginaliaViteOptions, type MarginaliaVitePlugin } from '../../../src/integrations/vite/plugin.js'
import { isMarginaliaAt } from '../../../src/integrations/vite/probe.js'
import { openStore, startHttpServer } from '../../../src/index.js'
import { request } from '../../helpers/http.js'
import { testDir } from '../../helpers/store.js'
import { eventually } from '../../helpers/eventually.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { viteConfig } from '../../helpers/vite.js'

const cleanups = useCleanups()

function project(): string {
  const { dir } = testDir(cleanups, 'marginalia-vite-')
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><title>App</title></head><body><div id="app"></div><script type="module" src="/main.js"></script></body></html>')
  writeFileSync(path.join(dir, 'main.js'), "document.getElementById('app').textContent = 'hello'\n")
  return dir
}

async function dev(root: string, options: MarginaliaViteOptions): Promise<{ vite: ViteDevServer; url: string; plugin: MarginaliaVitePlugin; logs: string[] }> {
  const plugin = marginalia(options)
  const logs: string[] = []
  const vite = await createServer(viteConfig(root, [plugin], { logs }))
  let closed = false
  cleanups.push(() => (closed ? undefined : vite.close()))
  const close = vite.close.bind(vite)
  vite.close = async () => {
    closed = true
    await close()
  }
  await vite.listen()
  const { port } = vite.httpServer!.address() as AddressInfo
  return { vite, url: `http://127.0.0.1:${port}`, plugin, logs }
}

const LOADER_TAG = /^<!doctype html><html><head>\s*<script src="\/__marginalia-loader\.js" data-marginalia-loader(?:="")?><\/script>\s*<script type="module" src="\/@vite\/client"><\/script>\s*<title>/
/** The overlay's URL in the loader the dev server at `url` serves (the loader adds the overlay's script). */
async function loaderOverlay(url: string): Promise<string | undefined> {
  const loader = await request(`${url}/__marginalia-loader.js`)
  expect(loader.status).toBe(200)
  expect(loader.headers['content-type']).toMatch(/javascript/)
  return /var OVERLAY = "([^"]+)"/.exec(loader.text)?.[1]
}
/** The Marginalia server a page of the dev server at `url` gets its overlay from: the page carries only the loader's tag, first in <head>. */
async function overlayServer(url: string): Promise<string | undefined> {
  const page = await request(`${url}/`)
  expect(page.status).toBe(200)
  expect(page.text).toMatch(LOADER_TAG)
  expect(page.text).not.toContain('overlay.js')
  return (await loaderOverlay(url))?.replace(/\/overlay\.js$/, '')
}

describe('marginalia/vite', () => {
  it('starts a Marginalia server in the Vite process on the project store, injects the overlay, and closes it with Vite', { timeout: 60_000 }, async () => {
    const root = project()
    const { vite, url, plugin, logs } = await dev(root, { port: 0 })
    // The first page, asked for as soon as Vite listens, carries the loader; the loader waits for the server and adds the overlay from it.
    const server = await overlayServer(url)
    const state = plugin.marginalia()!
    expect(state.mode).toBe('started')
    expect(state.storeFile).toBe(path.join(root, '.marginalia', 'store.json'))
    expect(server).toBe(state.url)
    expect(logs.join('\n')).toContain(`marginalia: inbox ${state.url}/`)

    // That server is Marginalia, serving the overlay, on the project's store file.
    expect(await isMarginaliaAt(state.url)).toBe(true)
    const js = await request(`${state.url}/overlay.js`)
    expect(js.status).toBe(200)
    expect(js.headers['content-type']).toMatch(/javascript/)
    expect((await request(`${state.url}/api/sessions`, { method: 'POST', body: { url: 'http://localhost:5173/' } })).status).toBe(201)
    await eventually(() => existsSync(state.storeFile)).toBe(true)

    await vite.close()
    await eventually(() => isMarginaliaAt(state.url, 500)).toBe(false)
    // The store was flushed and closed: another process can open it and sees the session.
    const store = await openStore({ file: state.storeFile })
    cleanups.push(() => store.close())
    expect(store.listSessions().map((s) => s.url)).toEqual(['http://localhost:5173/'])
  })

  it('reuses a Marginalia server already running on the port (and leaves it running)', { timeout: 60_000 }, async () => {
    const root = project()
    const store = await openStore({ file: path.join(root, '.marginalia', 'store.json') })
    cleanups.push(() => store.close())
    const running = await startHttpServer(store, { port: 0, log: () => {} })
    cleanups.push(() => running.close())
    const { vite, url, plugin, logs } = await dev(root, { port: running.port })
    expect(await plugin.ready()).toMatchObject({ mode: 'reused', url: running.url })
    expect(await overlayServer(url)).toBe(running.url)
    expect(logs.join('\n')).toContain("using this project's server already running")
    await vite.close()
    expect(await isMarginaliaAt(running.url)).toBe(true)
  })

  it('never adopts a server of another store on the port: it says whose it is and injects nothing (and reuses one of the same store)', { timeout: 60_000 }, async () => {
    const root = project()
    const other = path.join(root, 'elsewhere', 'store.json')
    const store = await openStore({ file: other })
    cleanups.push(() => store.close())
    const running = await startHttpServer(store, { port: 0, log: () => {}, storeLocation: other })
    cleanups.push(() => running.close())
    const { logs, plugin } = await dev(root, { port: running.port })
    expect(await plugin.ready()).toBeUndefined()
    const refusal = logs.find((l) => l.startsWith('error: ') && l.includes(`port ${running.port} is taken by the Marginalia server of`))
    expect(refusal).toContain(other)

    const same = path.join(root, '.marginalia', 'store.json')
    const sameStore = await openStore({ file: same })
    cleanups.push(() => sameStore.close())
    const sameServer = await startHttpServer(sameStore, { port: 0, log: () => {}, storeLocation: same })
    cleanups.push(() => sameServer.close())
    const quiet = await dev(root, { port: sameServer.port })
    expect(await quiet.plugin.ready()).toMatchObject({ mode: 'reused' })
    expect(quiet.logs.join('\n')).not.toContain('is taken by')
  })

  it('keeps its server up across a Vite restart, then closes it', { timeout: 60_000 }, async () => {
    const root = project()
    const { vite, plugin } = await dev(root, { port: 0 })
    const { url } = (await plugin.ready())!
    await vite.restart()
    expect(await isMarginaliaAt(url)).toBe(true)
    const port = (vite.httpServer!.address() as AddressInfo).port
    expect(await overlayServer(`http://127.0.0.1:${port}`)).toBe(url)
    await vite.close()
    await eventually(() => isMarginaliaAt(url, 500)).toBe(false)
  })

  it('in middleware mode (no Vite HTTP server) it still closes its server with Vite', { timeout: 60_000 }, async () => {
    const root = project()
    const plugin = marginalia({ port: 0 })
    const logs: string[] = []
    const base = viteConfig(root, [plugin], { logs })
    const vite = await createServer({ ...base, server: { ...base.server, middlewareMode: true } })
    cleanups.push(() => vite.close()) // closing twice is a no-op
    const { url } = (await plugin.ready())!
    expect(await isMarginaliaAt(url)).toBe(true)
    const html = await vite.transformIndexHtml('/', readFileSync(path.join(root, 'index.html'), 'utf8'))
    expect(html).toMatch(LOADER_TAG)
    await vite.close()
    await eventually(() => isMarginaliaAt(url, 500)).toBe(false)
  })

  /** Holds the plugin's start open: `entered` when it is called, and it goes on (starting for real) at `go()`. */
  function holdStart(): { entered: Promise<void>; go: () => void; started: () => Promise<{ url: string }> } {
    let go!: () => void
    const gate = new Promise<void>((resolve) => (go = resolve))
    let enter!: () => void
    const entered = new Promise<void>((resolve) => (enter = resolve))
    let started: Promise<{ url: string }> | undefined
    testing.start = (start) => {
      enter()
      const run = gate.then(start)
      started = run
      return run
    }
    cleanups.push(() => {
      testing.start = undefined
      go()
    })
    return { entered, go, started: () => started! }
  }

  it('the dev server listens and serves its pages without waiting for Marginalia\'s server; only the loader waits for it, then adds the overlay', { timeout: 60_000 }, async () => {
    const root = project()
    const held = holdStart()
    const { url, plugin, logs } = await dev(root, { port: 0, shortcut: 'Ctrl+Alt+M' })
    // Vite is listening and serving while the start is held open: the page too, with the loader's tag.
    await held.entered
    expect(plugin.marginalia()).toBeUndefined()
    const script = await request(`${url}/main.js`)
    expect(script.status).toBe(200)
    const page = await request(`${url}/`)
    expect(page.status).toBe(200)
    expect(page.text).toMatch(LOADER_TAG)
    expect(plugin.marginalia()).toBeUndefined()
    expect(logs.join('\n')).not.toContain('marginalia: inbox')

    // The loader asked for now is answered once the server has started: it names the overlay on
    // that server, whose port (port: 0, any free one) nobody knew before the start.
    const loader = loaderOverlay(url)
    held.go()
    const overlay = await loader
    const state = plugin.marginalia()!
    expect(state.mode).toBe('started')
    expect(overlay).toBe(`${state.url}/overlay.js`)
    expect((await request(`${url}/__marginalia-loader.js`)).text).toContain('var SHORTCUT = "Ctrl+Alt+M"')
    expect(await isMarginaliaAt(state.url)).toBe(true)
    // The banner follows once the server is up.
    expect(logs.join('\n')).toContain(`marginalia: inbox ${state.url}/`)
  })

  it('a dev server closed while the start is in flight closes the server once it has started', { timeout: 60_000 }, async () => {
    const root = project()
    const held = holdStart()
    const { vite, plugin, logs } = await dev(root, { port: 0 })
    await held.entered
    await vite.close()
    held.go()
    const http = await held.started()
    expect(await plugin.ready()).toBeUndefined()
    await eventually(() => isMarginaliaAt(http.url, 500)).toBe(false)
    expect(logs.join('\n')).not.toContain('marginalia: inbox')
    // The store was closed: the next dev server on this project starts its own server on it.
    const again = await dev(root, { port: 0 })
    expect(await again.plugin.ready()).toMatchObject({ mode: 'started' })
    expect(again.plugin.marginalia()!.url).not.toBe(http.url)
  })

  it('a dev server restarted while the start is in flight keeps the server the start brings up', { timeout: 60_000 }, async () => {
    const root = project()
    const held = holdStart()
    const { vite, plugin } = await dev(root, { port: 0 })
    await held.entered
    const restarted = vite.restart()
    held.go()
    await restarted
    const http = await held.started()
    const state = (await plugin.ready())!
    expect(state.url).toBe(http.url)
    expect(await isMarginaliaAt(http.url)).toBe(true)
    const port = (vite.httpServer!.address() as AddressInfo).port
    expect(await overlayServer(`http://127.0.0.1:${port}`)).toBe(http.url)
    await vite.close()
    await eventually(() => isMarginaliaAt(http.url, 500)).toBe(false)
  })

  it('a start that fails logs why and adds nothing: the loader of a page served meanwhile adds no overlay, later pages carry no tag', { timeout: 60_000 }, async () => {
    const root = project()
    // Something else on the port, answering as any web server would (not Marginalia).
    const busy = http.createServer((_req, res) => res.writeHead(404).end())
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())))
    const { port } = busy.address() as AddressInfo
    const held = holdStart()
    const { url, plugin, logs } = await dev(root, { port })
    await held.entered
    expect((await request(`${url}/`)).text).toMatch(LOADER_TAG)
    held.go()
    const loader = await request(`${url}/__marginalia-loader.js`)
    expect(loader.status).toBe(200)
    expect(loader.text).not.toContain('overlay.js')
    expect(loader.text).toMatch(/^\/\*[^]*\*\/\s*$/)
    const page = await request(`${url}/`)
    expect(page.status).toBe(200)
    expect(page.text).not.toContain('data-marginalia')
    expect(plugin.marginalia()).toBeUndefined()
    expect(logs.join('\n')).toContain(`marginalia: could not start the server on 127.0.0.1:${port}`)
  })

  it('with start: false only injects the overlay, for a `marginalia serve` run separately', { timeout: 60_000 }, async () => {
    const root = project()
    const { url, plugin } = await dev(root, { start: false, port: 4999 })
    expect(plugin.marginalia()).toMatchObject({ mode: 'external', url: 'http://127.0.0.1:4999' })
    expect(await overlayServer(url)).toBe('http://127.0.0.1:4999')
    expect(await isMarginaliaAt('http://127.0.0.1:4999', 300)).toBe(false)
  })

  it('never touches a production build', { timeout: 60_000 }, async () => {
    const root = project()
    const plugin = marginalia({ port: 0 })
    const outDir = path.join(root, 'dist')
    mkdirSync(outDir, { recursive: true })
    const logs: string[] = []
    await build({ ...viteConfig(root, [plugin], { logs }), logLevel: 'silent', build: { outDir, emptyOutDir: true } })
    const html = readFileSync(path.join(outDir, 'index.html'), 'utf8')
    expect(html).toContain('<div id="app">')
    expect(html).not.toContain('overlay.js')
    expect(plugin.marginalia()).toBeUndefined()
  })

  it('rejects a bad port at once', () => {
    expect(() => marginalia({ port: 70_000 })).toThrow(/port must be a whole number/)
    expect(marginalia().apply).toBe('serve')
    expect(marginalia().name).toBe('marginalia')
  })
})
