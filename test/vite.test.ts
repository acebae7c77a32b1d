/**
 * The Vite plugin with a real Vite dev server (and a real production build): it injects the
 * overlay into dev pages only, starts or reuses the Marginalia server, keeps it through a Vite
 * restart, and closes it with Vite.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { build, createServer, type ViteDevServer } from 'vite'
import marginalia, { isMarginaliaAt, type MarginaliaViteOptions, type MarginaliaVitePlugin } from '../src/vite.js'
import { openStore, startHttpServer } from '../src/index.js'
import { request } from './helpers/http.js'
import { testDir } from './helpers/store.js'
import { eventually } from './helpers/eventually.js'
import { useCleanups } from './helpers/cleanup.js'
import { viteConfig } from './helpers/vite.js'

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

const overlayTag = (html: string) => /<script src="(http:\/\/127\.0\.0\.1:\d+)\/overlay\.js" defer(?:="")? data-marginalia(?:="")?><\/script>/.exec(html)

describe('marginalia/vite', () => {
  it('starts a Marginalia server in the Vite process on the project store, injects the overlay, and closes it with Vite', { timeout: 60_000 }, async () => {
    const root = project()
    const { vite, url, plugin, logs } = await dev(root, { port: 0 })
    const state = plugin.marginalia()!
    expect(state.mode).toBe('started')
    expect(state.storeFile).toBe(path.join(root, '.marginalia', 'store.json'))

    const page = await request(`${url}/`)
    expect(page.status).toBe(200)
    const tag = overlayTag(page.text)
    expect(tag?.[1]).toBe(state.url)
    expect(page.text.indexOf('/overlay.js')).toBeLessThan(page.text.indexOf('</body>'))
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
    expect(plugin.marginalia()).toMatchObject({ mode: 'reused', url: running.url })
    expect(overlayTag((await request(`${url}/`)).text)?.[1]).toBe(running.url)
    expect(logs.join('\n')).toContain('using the server already running')
    await vite.close()
    expect(await isMarginaliaAt(running.url)).toBe(true)
  })

  it('says so when the server it reuses serves another store than the project\'s (and stays quiet when it is the same)', { timeout: 60_000 }, async () => {
    const root = project()
    const other = path.join(root, 'elsewhere', 'store.json')
    const store = await openStore({ file: other })
    cleanups.push(() => store.close())
    const running = await startHttpServer(store, { port: 0, log: () => {}, storeLocation: other })
    cleanups.push(() => running.close())
    const { logs } = await dev(root, { port: running.port })
    const warning = logs.find((l) => l.startsWith('warn: ') && l.includes('serves the store'))
    expect(warning).toContain(other)
    expect(warning).toContain(path.join(root, '.marginalia', 'store.json'))

    const same = path.join(root, '.marginalia', 'store.json')
    const sameStore = await openStore({ file: same })
    cleanups.push(() => sameStore.close())
    const sameServer = await startHttpServer(sameStore, { port: 0, log: () => {}, storeLocation: same })
    cleanups.push(() => sameServer.close())
    const quiet = await dev(root, { port: sameServer.port })
    expect(quiet.plugin.marginalia()).toMatchObject({ mode: 'reused' })
    expect(quiet.logs.join('\n')).not.toContain('serves the store')
  })

  it('keeps its server up across a Vite restart, then closes it', { timeout: 60_000 }, async () => {
    const root = project()
    const { vite, plugin } = await dev(root, { port: 0 })
    const { url } = plugin.marginalia()!
    await vite.restart()
    expect(await isMarginaliaAt(url)).toBe(true)
    const port = (vite.httpServer!.address() as AddressInfo).port
    expect(overlayTag((await request(`http://127.0.0.1:${port}/`)).text)?.[1]).toBe(url)
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
    const { url } = plugin.marginalia()!
    expect(await isMarginaliaAt(url)).toBe(true)
    const html = await vite.transformIndexHtml('/', readFileSync(path.join(root, 'index.html'), 'utf8'))
    expect(overlayTag(html)?.[1]).toBe(url)
    await vite.close()
    await eventually(() => isMarginaliaAt(url, 500)).toBe(false)
  })

  it('with start: false only injects the overlay, for a `marginalia serve` run separately', { timeout: 60_000 }, async () => {
    const root = project()
    const { url, plugin } = await dev(root, { start: false, port: 4999 })
    expect(plugin.marginalia()).toMatchObject({ mode: 'external', url: 'http://127.0.0.1:4999' })
    expect(overlayTag((await request(`${url}/`)).text)?.[1]).toBe('http://127.0.0.1:4999')
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
