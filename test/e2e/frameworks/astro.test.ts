/**
 * Astro (the minimal starter with React, Vue and Svelte islands, Astro 5.18.2, pinned by its
 * lockfile, in test/fixtures/frameworks/astro): `marginalia init --yes` adds the `marginalia/astro`
 * integration to astro.config.mjs; on `astro dev` every page carries the loader first in <head>
 * and the overlay; a button written in an .astro component and one in each island, annotated by the
 * keyboard, reach the agent (started from the config init wrote) with their exact file:line and
 * component, and the button of a shared .astro component with where the page uses it (its
 * `<Button` tag); and `astro build` with `sourceLocations: 'ids'` writes pages with ids and a
 * manifest that maps them to file:line.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { runCli } from '../../helpers/cli.js'
import { annotateByKeyboard, fixtureInPlace, fixtureInstalled, freePort, pageErrors, pendingFromAgent, startApp } from '../../helpers/framework-app.js'

const chromium = useChromium()
const { cleanups } = chromium
const installed = fixtureInstalled('astro')
const ASTRO = 'astro/astro.js'

/** Each known button: where it is written, and its component. */
const BUTTONS = [
  { selector: 'button.ui-button', at: 'src/components/ui/Button.astro:9:1', component: 'Button' },
  { selector: 'button.astro-button', at: 'src/components/Card.astro:11:3', component: 'Card' },
  { selector: 'button.react-button', at: 'src/components/ReactCounter.tsx:7:7', component: 'ReactCounter' },
  { selector: 'button.vue-button', at: 'src/components/VueCounter.vue:9:5', component: 'VueCounter' },
  { selector: 'button.svelte-button', at: 'src/components/SvelteCounter.svelte:6:3', component: 'SvelteCounter' },
]

describe.skipIf(!chromium.enabled || !installed)('Astro', () => {
  it('init sets it up; in dev a button of an .astro component and of each island is annotated by the keyboard and the agent gets its file:line and component', { timeout: 150_000 }, async () => {
    const dir = fixtureInPlace(cleanups, 'astro')
    const init = await runCli(['init', '--yes'], dir)
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toContain('framework: Astro (astro)')
    expect(init.stdout).toContain('change astro.config.mjs — the Marginalia integration (in astro dev only')
    expect(init.stdout).not.toMatch(/vite/i)
    const config = readFileSync(path.join(dir, 'astro.config.mjs'), 'utf8')
    expect(config).toContain("import svelte from '@astrojs/svelte';\nimport marginalia from 'marginalia/astro';\n")
    expect(config).toContain('integrations: [marginalia(), react(), vue(), svelte()]')

    const [port, marginaliaPort] = await Promise.all([freePort(), freePort()])
    const dev = startApp(cleanups, dir, ASTRO, ['dev', '--port', String(port), '--host', '127.0.0.1'], { MARGINALIA_PORT: String(marginaliaPort) })
    await dev.waitFor(/Local\s+http:\/\/127\.0\.0\.1:\d+/, 90_000)

    // The page Astro renders: the loader's tag first in <head> (the loader adds the overlay); every known button marked.
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    expect(html).toContain('<head><script src="/__marginalia-loader.js" data-marginalia-loader></script>')
    expect(html).not.toContain('overlay.js')
    for (const b of BUTTONS) expect(html).toContain(`<button data-marginalia-source="${b.at}"`)
    expect(await (await fetch(`http://127.0.0.1:${port}/__marginalia-loader.js`)).text()).toContain(`var OVERLAY = "http://127.0.0.1:${marginaliaPort}/overlay.js"`)
    expect(dev.output()).toContain(`marginalia: inbox http://127.0.0.1:${marginaliaPort}/`)

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(`http://127.0.0.1:${port}/`)
    // Every island hydrated (Astro drops the ssr attribute then).
    await page.waitForFunction("document.querySelectorAll('astro-island').length === 3 && document.querySelectorAll('astro-island[ssr]').length === 0", undefined, { timeout: 60_000 })
    for (const b of BUTTONS) await annotateByKeyboard(page, b.selector, `Note on ${b.component}`)

    const notes = await pendingFromAgent(cleanups, dir)
    expect(notes.map((n) => n.annotation.comment)).toEqual(BUTTONS.map((b) => `Note on ${b.component}`))
    for (const [i, b] of BUTTONS.entries()) {
      const [file, line, column] = b.at.split(':')
      expect(notes[i]?.annotation.source, b.selector).toMatchObject({ file, line: Number(line), column: Number(column), component: b.component, via: 'mark', exact: true })
    }
    // The shared .astro component: used at the page's <Button tag.
    expect(notes[0]?.annotation.source).toMatchObject({ components: ['Button'], callSite: { file: 'src/pages/index.astro', line: 19, column: 3, component: 'index' } })
    expect(errors).toEqual([])
  })

  it('astro build with ids: data-mid in the pages astro preview serves, and the manifest maps them to file:line', { timeout: 150_000 }, async () => {
    const dir = fixtureInPlace(cleanups, 'astro')
    expect((await runCli(['init', '--yes'], dir)).code).toBe(0)
    const configFile = path.join(dir, 'astro.config.mjs')
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('marginalia()', "marginalia({ sourceLocations: 'ids' })"))
    const build = startApp(cleanups, dir, ASTRO, ['build'])
    expect(await build.exited(140_000), build.output()).toBe(0)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'marginalia-sources.json'), 'utf8')) as { version: number; sources: Record<string, string> }
    const idOf = new Map(Object.entries(manifest.sources).map(([id, at]) => [at, id]))

    const port = await freePort()
    const preview = startApp(cleanups, dir, ASTRO, ['preview', '--port', String(port), '--host', '127.0.0.1'])
    await preview.waitFor(/Local\s+http:\/\/127\.0\.0\.1:\d+/, 30_000)
    const html = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text()
    for (const b of BUTTONS) {
      expect(idOf.get(b.at), b.at).toBeDefined()
      expect(html).toContain(`<button data-mid="${idOf.get(b.at)}"`)
    }
    expect(html).not.toContain('data-marginalia-source')
    expect(html).not.toContain('data-marginalia-astro-call')
    expect(html).not.toContain('marginalia-loader')
  })
})
