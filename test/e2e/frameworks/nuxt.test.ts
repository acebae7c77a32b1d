/**
 * Nuxt (the minimal starter, Nuxt 4.3.1, pinned by its lockfile, in test/fixtures/frameworks/nuxt):
 * `marginalia init --yes` adds the `marginalia/nuxt` module to nuxt.config.ts; on `nuxt dev` the
 * pages Nitro renders carry the loader first in <head> and the overlay, and the .vue elements their
 * file:line; a shared button annotated by the keyboard reaches the agent (started from the config
 * init wrote) with its file:line, component and call site; and `nuxt build` with
 * `sourceLocations: 'ids'` gives ids in the markup the built server renders and a manifest that maps
 * them to file:line.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { runCli } from '../../helpers/cli.js'
import { annotateByKeyboard, copyFixture, fixtureInstalled, freePort, pageErrors, pendingFromAgent, startApp } from '../../helpers/framework-app.js'

const chromium = useChromium()
const { cleanups } = chromium
const installed = fixtureInstalled('nuxt')
const NUXT = 'nuxt/bin/nuxt.mjs'

describe.skipIf(!chromium.enabled || !installed)('Nuxt', () => {
  it('init sets it up; in dev a shared button is annotated by the keyboard and the agent gets its file:line, component and call site', { timeout: 150_000 }, async () => {
    const dir = copyFixture(cleanups, 'nuxt')
    const init = await runCli(['init', '--yes'], dir)
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toContain('framework: Nuxt (nuxt)')
    expect(init.stdout).toContain("change nuxt.config.ts — the Marginalia module (in nuxt dev only")
    expect(init.stdout).not.toMatch(/vite/i)
    expect(readFileSync(path.join(dir, 'nuxt.config.ts'), 'utf8')).toContain("export default defineNuxtConfig({\n  modules: ['marginalia/nuxt'],\n  compatibilityDate:")

    const [port, marginaliaPort] = await Promise.all([freePort(), freePort()])
    const dev = startApp(cleanups, dir, NUXT, ['dev', '--port', String(port), '--host', '127.0.0.1'], { MARGINALIA_PORT: String(marginaliaPort) })
    await dev.waitFor(/Nitro server built/, 120_000)
    // Said once Marginalia's server is up, which Vite does not wait for (its own banner may come first).
    await dev.waitFor(new RegExp(`marginalia: inbox http://127\\.0\\.0\\.1:${marginaliaPort}/`), 30_000)

    // The page Nitro renders: the loader's tag first in <head> (the loader adds the overlay); the .vue markup marked.
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    expect(html).toContain('<head><script src="/_nuxt/__marginalia-loader.js" data-marginalia-loader></script>')
    expect(html).not.toContain('overlay.js')
    expect(html).toContain('<button data-marginalia-source="app/components/ui/Button.vue:6:3"')
    const loader = await fetch(`http://127.0.0.1:${port}/_nuxt/__marginalia-loader.js`)
    expect(loader.status).toBe(200)
    expect(await loader.text()).toContain(`var OVERLAY = "http://127.0.0.1:${marginaliaPort}/overlay.js"`)

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(`http://127.0.0.1:${port}/`)
    // Hydrated: Vue's component instance is on the button.
    await page.waitForFunction("document.querySelector('button.ui-button')?.__vueParentComponent != null", undefined, { timeout: 60_000 })
    await annotateByKeyboard(page, 'button.ui-button', 'Make Add one bigger')

    const [note] = await pendingFromAgent(cleanups, dir)
    expect(note?.annotation.comment).toBe('Make Add one bigger')
    expect(note?.annotation.source).toMatchObject({ file: 'app/components/ui/Button.vue', line: 6, column: 3, component: 'UiButton', via: 'mark', callSite: { file: 'app/components/Counter.vue', line: 8, column: 5 } })
    expect(errors).toEqual([])
  })

  it('nuxt build with ids: data-mid in the pages the built server renders, and the manifest maps them to file:line', { timeout: 150_000 }, async () => {
    const dir = copyFixture(cleanups, 'nuxt')
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    const configFile = path.join(dir, 'nuxt.config.ts')
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace("'marginalia/nuxt'", "['marginalia/nuxt', { sourceLocations: 'ids' }]"))
    const build = startApp(cleanups, dir, NUXT, ['build'])
    expect(await build.exited(140_000), build.output()).toBe(0)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'marginalia-sources.json'), 'utf8')) as { version: number; sources: Record<string, string> }
    const buttonId = Object.entries(manifest.sources).find(([, at]) => at === 'app/components/ui/Button.vue:6:3')?.[0]
    expect(buttonId).toBeDefined()

    const port = await freePort()
    const server = startApp(cleanups, dir, '../.output/server/index.mjs', [], { PORT: String(port), HOST: '127.0.0.1', NITRO_PORT: String(port), NITRO_HOST: '127.0.0.1' })
    await server.waitFor(/Listening on/, 30_000)
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    expect(html).toContain(`<button data-mid="${buttonId}"`)
    expect(html).not.toContain('data-marginalia-source')
    expect(html).not.toContain('marginalia-loader')
  })
})
