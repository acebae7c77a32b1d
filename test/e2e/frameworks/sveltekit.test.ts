/**
 * SvelteKit (the `sv create` minimal TypeScript starter, pinned by its lockfile, in
 * test/fixtures/frameworks/sveltekit): `marginalia init --yes` adds the Vite plugin beside
 * sveltekit(); on `vite dev` the server-rendered pages carry the loader first in <head> and the
 * overlay; a shared button annotated by the keyboard reaches the agent (started from the config init
 * wrote) with its exact file:line, component and call site; and a preview build with
 * `sourceLocations: 'ids'` carries ids in its markup and a manifest that maps them to file:line.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { runCli } from '../../helpers/cli.js'
import { annotateByKeyboard, copyFixture, fixtureInstalled, freePort, pageErrors, pendingFromAgent, startApp } from '../../helpers/framework-app.js'

const chromium = useChromium()
const { cleanups } = chromium
const installed = fixtureInstalled('sveltekit')

describe.skipIf(!chromium.enabled || !installed)('SvelteKit', () => {
  it('init sets it up; in dev a shared button is annotated by the keyboard and the agent gets its file:line, component and call site', { timeout: 120_000 }, async () => {
    const dir = copyFixture(cleanups, 'sveltekit')
    const init = await runCli(['init', '--yes'], dir)
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toContain('framework: SvelteKit (sveltekit)')
    expect(init.stdout).toMatch(/change vite\.config\.ts — the Vite plugin/)
    const config = readFileSync(path.join(dir, 'vite.config.ts'), 'utf8')
    expect(config).toMatch(/^import marginalia from 'marginalia\/vite'$/m)
    expect(config).toMatch(/plugins: \[\n\t\tmarginalia\(\),\n\t\tsveltekit\(/)

    const [port, marginaliaPort] = await Promise.all([freePort(), freePort()])
    const dev = startApp(cleanups, dir, 'vite/bin/vite.js', ['dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'], { MARGINALIA_PORT: String(marginaliaPort) })
    await dev.waitFor(/Local:\s+http:\/\/127\.0\.0\.1:\d+/, 90_000)
    // Said once Marginalia's server is up, which Vite does not wait for (its own banner may come first).
    await dev.waitFor(new RegExp(`marginalia: inbox http://127\\.0\\.0\\.1:${marginaliaPort}/`), 30_000)

    // The server-rendered page: the loader's tag first in <head> (the loader adds the overlay); the markup marked.
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    expect(html).toContain('<head><script src="/__marginalia-loader.js" data-marginalia-loader></script>')
    expect(html).not.toContain('overlay.js')
    expect(await (await fetch(`http://127.0.0.1:${port}/__marginalia-loader.js`)).text()).toContain(`var OVERLAY = "http://127.0.0.1:${marginaliaPort}/overlay.js"`)
    expect(html).toContain('<button data-marginalia-source="src/lib/components/ui/Button.svelte:7:1"')

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(`http://127.0.0.1:${port}/`)
    // Hydrated: Svelte's dev metadata (the call site comes from it) is on the button.
    await page.waitForFunction("document.querySelector('button.ui-button')?.__svelte_meta != null", undefined, { timeout: 60_000 })
    await annotateByKeyboard(page, 'button.ui-button', 'Make Add one bigger')

    const [note] = await pendingFromAgent(cleanups, dir)
    expect(note?.annotation.comment).toBe('Make Add one bigger')
    expect(note?.annotation.source).toMatchObject({ file: 'src/lib/components/ui/Button.svelte', line: 7, column: 1, component: 'Button', via: 'mark', callSite: { file: 'src/lib/Counter.svelte', line: 9, column: 2 } })
    expect(errors).toEqual([])
  })

  it('a preview build with ids: data-mid in the pages vite preview serves, and the manifest maps them to file:line', { timeout: 120_000 }, async () => {
    const dir = copyFixture(cleanups, 'sveltekit')
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    const configFile = path.join(dir, 'vite.config.ts')
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('marginalia()', "marginalia({ sourceLocations: 'ids' })"))
    const build = startApp(cleanups, dir, 'vite/bin/vite.js', ['build'])
    expect(await build.exited(110_000), build.output()).toBe(0)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'marginalia-sources.json'), 'utf8')) as { version: number; sources: Record<string, string> }
    const buttonId = Object.entries(manifest.sources).find(([, at]) => at === 'src/lib/components/ui/Button.svelte:7:1')?.[0]
    expect(buttonId).toBeDefined()

    const port = await freePort()
    const preview = startApp(cleanups, dir, 'vite/bin/vite.js', ['preview', '--port', String(port), '--strictPort', '--host', '127.0.0.1'])
    await preview.waitFor(/Local:\s+http:\/\/127\.0\.0\.1:\d+/, 30_000)
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    expect(html).toContain(`<button data-mid="${buttonId}"`)
    // A production page: no paths, no overlay injected.
    expect(html).not.toContain('data-marginalia-source')
    expect(html).not.toContain('marginalia-loader')
  })
})
