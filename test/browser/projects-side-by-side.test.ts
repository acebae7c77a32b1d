/**
 * Two projects on one machine, as a person runs them: two Vite dev servers from two projects, no
 * port given. Each starts its own Marginalia server on its project's own port, and what the
 * person annotates in each app (in Chromium, by the keyboard) lands in that project's store only.
 * A third dev server told to use the first project's port refuses to adopt that server; and a page
 * whose overlay reaches another project's server (a head snippet naming its project, the port
 * taken by the other one) refuses to send, naming both projects, and keeps the annotation.
 */
import { describe, expect, it } from 'vitest'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { createServer } from 'vite'
import marginalia, { type MarginaliaViteOptions } from '../../src/integrations/vite/index.js'
import { headSnippet } from '../../src/integrations/shared/loader-script.js'
import { FIRST_PROJECT_PORT, PROJECT_PORTS, recordedPort } from '../../src/http/project-port.js'
import { fetchHealth } from '../../src/http/health.js'
import { useChromium } from '../helpers/chromium.js'
import { testDir } from '../helpers/store.js'
import { viteConfig } from '../helpers/vite.js'
import { eventually } from '../helpers/eventually.js'
import { annotateByKeyboard } from '../e2e/frameworks/harness.js'

const chromium = useChromium()
const { cleanups } = chromium

/** A small app in a folder named `name` (its project's name). */
function project(name: string): string {
  const { dir: parent } = testDir(cleanups, 'marginalia-projects-')
  const dir = path.join(parent, name)
  mkdirSync(dir)
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html><html><head><title>${name}</title></head><body><main><h1 id="title" tabindex="0">${name} home</h1></main><script type="module" src="/main.js"></script></body></html>`)
  writeFileSync(path.join(dir, 'main.js'), "document.body.dataset.ready = 'yes'\n")
  return dir
}

async function dev(root: string, options: MarginaliaViteOptions = {}) {
  const plugin = marginalia(options)
  const logs: string[] = []
  const vite = await createServer(viteConfig(root, [plugin], { logs }))
  cleanups.push(() => vite.close())
  await vite.listen()
  const { port } = vite.httpServer!.address() as AddressInfo
  const state = await plugin.ready()
  return { url: `http://127.0.0.1:${port}`, state, logs }
}

const ui = (page: import('playwright-core').Page, selector: string) => page.locator(`marginalia-overlay ${selector}`)

describe.runIf(chromium.enabled)('two projects on one machine', () => {
  it('each dev server starts its own project\'s server on its own port, and each annotation lands in its own store', { timeout: 120_000 }, async () => {
    const shop = project('shop')
    const blog = project('blog')
    const a = await dev(shop)
    const b = await dev(blog)
    expect(a.state?.mode).toBe('started')
    expect(b.state?.mode).toBe('started')
    const portA = Number(new URL(a.state!.url).port)
    const portB = Number(new URL(b.state!.url).port)
    expect(portA).not.toBe(portB)
    for (const p of [portA, portB]) {
      expect(p).toBeGreaterThanOrEqual(FIRST_PROJECT_PORT)
      expect(p).toBeLessThan(FIRST_PROJECT_PORT + PROJECT_PORTS)
    }
    // Each project keeps its port: recorded in its .marginalia/ for its next start, doctor and the agent.
    expect(recordedPort(shop)).toBe(portA)
    expect(recordedPort(blog)).toBe(portB)
    // /health says which project and store each serves.
    expect((await fetchHealth(a.state!.url))?.store).toMatchObject({ project: 'shop', location: path.join(shop, '.marginalia', 'store.json') })
    expect((await fetchHealth(b.state!.url))?.store).toMatchObject({ project: 'blog', location: path.join(blog, '.marginalia', 'store.json') })

    const { page } = await chromium.newPage()
    for (const [app, comment] of [[a, 'The shop title is too small'], [b, 'The blog title wraps badly']] as const) {
      await page.goto(app.url)
      await annotateByKeyboard(page, '#title', comment)
      await page.locator('marginalia-overlay').getByText(/Sent as #1/).waitFor({ timeout: 20_000 })
    }
    const comments = async (url: string) => ((await (await fetch(`${url}/api/annotations`)).json()) as { annotations: { comment: string }[] }).annotations.map((x) => x.comment)
    expect(await comments(a.state!.url)).toEqual(['The shop title is too small'])
    expect(await comments(b.state!.url)).toEqual(['The blog title wraps badly'])
    expect(readFileSync(path.join(shop, '.marginalia', 'store.json'), 'utf8')).not.toContain('blog title')
  })

  it('a dev server given another project\'s port refuses to adopt its server, and says whose it is', { timeout: 60_000 }, async () => {
    const shop = project('shop')
    const a = await dev(shop)
    const port = Number(new URL(a.state!.url).port)
    const intruder = await dev(project('admin'), { port })
    expect(intruder.state).toBeUndefined()
    expect(intruder.logs.join('\n')).toMatch(new RegExp(`port ${port} is taken by the Marginalia server of project "shop"`))
    // Its pages get no overlay from the foreign server.
    const loader = await (await fetch(`${intruder.url}/__marginalia-loader.js`)).text()
    expect(loader).not.toContain('overlay.js"')
  })

  it('a page whose overlay reaches another project\'s server refuses to send, names both projects, and keeps the annotation', { timeout: 60_000 }, async () => {
    const shop = project('shop')
    const a = await dev(shop)
    // The blog's page, with the head snippet naming its project, pointed at the port the shop's server holds.
    const html = `<!doctype html><html><head>${headSnippet({ server: a.state!.url, command: 'npx marginalia serve', project: 'blog' })}<title>blog</title></head><body><h1 id="title" tabindex="0">blog home</h1></body></html>`
    const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
    const { page } = await chromium.newPage()
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    const alert = ui(page, '.foreign')
    await eventually(() => alert.isVisible(), 20_000).toBe(true)
    const text = await alert.textContent()
    expect(text).toContain('project “blog”')
    expect(text).toContain('project “shop”')
    if (process.env.MARGINALIA_SHOTS) await page.screenshot({ path: path.join(process.env.MARGINALIA_SHOTS, 'foreign-server.png') })

    await page.locator('#title').focus()
    await page.keyboard.press('Alt+Shift+A')
    await page.keyboard.press('Enter')
    // Annotate mode comes from the server on first use: the comment box opens on the focused heading once it is here.
    await ui(page, '.composer textarea').waitFor({ timeout: 15_000 })
    await page.keyboard.type('This must not reach the shop')
    await page.keyboard.press('Control+Enter')
    await eventually(() => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('marginalia:outbox:')).map((k) => localStorage.getItem(k)).join(''))).toContain('This must not reach the shop')
    const stored = ((await (await fetch(`${a.state!.url}/api/annotations`)).json()) as { annotations: unknown[] }).annotations
    expect(stored).toEqual([])
  })
})
