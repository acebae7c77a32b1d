/**
 * React Router 7 in framework mode (test/fixtures/frameworks/react-router, made by
 * create-react-router): `init --yes` adds the Vite plugin; under `react-router dev` the overlay is in
 * the server-rendered HTML and the page hydrates without an error; a shared button annotated by the
 * keyboard reaches an agent started from the config init wrote with its exact file:line, component
 * and call site. A production build with ids (`sourceLocations: 'ids'`) carries `data-mid` and the
 * manifest gives the agent file:line on the built app.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { startServeCli } from '../../helpers/cli.js'
import { agentFromConfig, annotateByKeyboard, copyFixture, freePort, init, untilHydrated, overlayReady, outputOf, pageErrors, positionOf, runBin } from './harness.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

describe.skipIf(!enabled)('React Router 7 (framework mode)', () => {
  it('init, dev server with SSR: the keyboard annotates a shared button; the agent gets file:line, component and call site', { timeout: 120_000 }, async () => {
    const dir = copyFixture('react-router', cleanups)
    const setup = await init(dir)
    expect(setup.stdout).toContain('framework: React Router (framework mode) (react-router)')
    expect(setup.stdout).toContain('+   plugins: [marginalia(), tailwindcss(), reactRouter()],')
    const env = { MARGINALIA_PORT: String(await freePort()) }
    const port = await freePort()
    const dev = runBin(cleanups, dir, 'react-router', ['dev', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], env)
    await dev.waitFor('stdout', /Local:/, 60_000)
    const url = `http://127.0.0.1:${port}/`

    // The server-rendered page carries the loader first in <head> and the marks.
    const html = await (await fetch(url, { headers: { Accept: 'text/html' } })).text()
    expect(html).toMatch(/<head[^>]*><script src="\/__marginalia-loader\.js" data-marginalia-loader><\/script>/)
    const buttonFile = path.join(dir, 'app/components/ui/Button.tsx')
    const button = positionOf(buttonFile, '<button')
    expect(html).toContain(`data-marginalia-source="app/components/ui/Button.tsx:${button.line}:${button.column}"`)

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(url)
    await overlayReady(page, outputOf(dev))
    // Hydrated: the button counts.
    await untilHydrated(page, '#add-to-basket', (t) => t !== 'Add to basket (0)')

    await annotateByKeyboard(page, '#add-to-basket', 'the basket button is too small')
    const agent = await agentFromConfig(cleanups, dir, env)
    const a = await agent.annotation('the basket button is too small')
    expect(a.source).toMatchObject({
      file: 'app/components/ui/Button.tsx',
      line: button.line,
      column: button.column,
      exact: true,
      component: 'Button',
      callSite: { file: 'app/welcome/counter.tsx', line: positionOf(path.join(dir, 'app/welcome/counter.tsx'), '<Button').line, component: 'Counter' },
    })
    expect(errors).toEqual([])
  })

  it("a production build with sourceLocations: 'ids': data-mid in the served HTML, file:line from the manifest", { timeout: 150_000 }, async () => {
    const dir = copyFixture('react-router', cleanups)
    await init(dir)
    const config = path.join(dir, 'vite.config.ts')
    writeFileSync(config, readFileSync(config, 'utf8').replace('marginalia()', "marginalia({ sourceLocations: 'ids' })"))
    const build = runBin(cleanups, dir, 'react-router', ['build'], {})
    expect(await build.exited(120_000)).toBe(0)
    const manifest = JSON.parse(readFileSync(path.join(dir, 'marginalia-sources.json'), 'utf8')) as { sources: Record<string, string> }

    const port = await freePort()
    runBin(cleanups, dir, 'react-router-serve', ['./build/server/index.js'], { PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' })
    const serve = await startServeCli(cleanups, dir, ['--sources', 'marginalia-sources.json'])
    const url = `http://127.0.0.1:${port}/`
    await expect.poll(async () => (await fetch(url).catch(() => undefined))?.status, { timeout: 30_000 }).toBe(200)
    const html = await (await fetch(url)).text()
    expect(html).not.toContain('data-marginalia-source')
    expect(html).not.toContain('marginalia-loader')
    const id = /<button data-mid="([^"]+)"/.exec(html)?.[1]
    const button = positionOf(path.join(dir, 'app/components/ui/Button.tsx'), '<button')
    expect(manifest.sources[id!]).toBe(`app/components/ui/Button.tsx:${button.line}:${button.column}`)

    // A person on the preview build, with the script tag: the agent gets file:line.
    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(url)
    await page.addScriptTag({ url: `${serve.url}/overlay.js` })
    await overlayReady(page)
    await annotateByKeyboard(page, '#add-to-basket', 'on the preview build')
    const agent = await agentFromConfig(cleanups, dir, { MARGINALIA_PORT: new URL(serve.url).port })
    expect((await agent.annotation('on the preview build')).source).toMatchObject({ file: 'app/components/ui/Button.tsx', line: button.line })
    expect(errors).toEqual([])
  })
})
