/**
 * Solid and Preact on Vite (test/fixtures/frameworks/{solid,preact}, made by create-vite's
 * solid-ts and preact-ts templates): `init --yes` adds the Vite plugin; under `vite` a shared
 * button annotated by the keyboard reaches an agent started from the config init wrote with its
 * exact file:line, its component and the exact line of the component tag that uses it. Solid keeps
 * no components in the DOM: the plugin stamps call sites at compile time (on Solid, a shared
 * component that returns a fragment gets one too). Preact's come from its virtual tree and its dev
 * JSX `__source`. A preview build (`vite build` with `sourceLocations: 'ids'`, `vite preview`, the
 * overlay's script tag, `marginalia serve --sources`) gives the agent the button's exact file:line
 * from the manifest; the build init's config makes carries nothing of Marginalia.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { agentFromConfig, annotateByKeyboard, copyFixture, freePort, init, overlayReady, outputOf, pageErrors, positionOf, annotatesPreviewBuild, runBin, untilHydrated } from './harness.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

const APPS = [
  // Solid's fixture also has a shared component that returns a fragment (src/components/ui/Price.tsx).
  { fixture: 'solid', name: 'Solid', plugin: 'solid()', components: ['Counter', 'Button'], fragment: true },
  { fixture: 'preact', name: 'Preact', plugin: 'preact()', components: ['App', 'Counter', 'Button'], fragment: false },
]

describe.skipIf(!enabled).each(APPS)('$name', ({ fixture, name, plugin, components, fragment }) => {
  it('init, vite dev: the keyboard annotates a shared button; the agent gets file:line, component and call site', { timeout: 120_000 }, async () => {
    const dir = copyFixture(fixture, cleanups)
    const setup = await init(dir)
    expect(setup.stdout).toContain(`framework: ${name} (${fixture})`)
    expect(setup.stdout).toContain(`+   plugins: [marginalia(), ${plugin}],`)
    const env = { MARGINALIA_PORT: String(await freePort()) }
    const port = await freePort()
    const dev = runBin(cleanups, dir, 'vite', ['--host', '127.0.0.1', '--port', String(port), '--strictPort'], env)
    await dev.waitFor('stdout', /Local:/, 60_000)

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    await page.goto(`http://127.0.0.1:${port}/`)
    await overlayReady(page, outputOf(dev))
    await untilHydrated(page, '#add-to-basket', (t) => t?.trim() !== 'Add to basket (0)')

    await annotateByKeyboard(page, '#add-to-basket', 'the basket button is too small')
    const agent = await agentFromConfig(cleanups, dir, env)
    const a = await agent.annotation('the basket button is too small')
    const button = positionOf(path.join(dir, 'src/components/ui/Button.tsx'), '<button')
    const used = positionOf(path.join(dir, 'src/Counter.tsx'), '<Button')
    expect(a.source).toMatchObject({
      file: 'src/components/ui/Button.tsx',
      line: button.line,
      column: button.column,
      exact: true,
      component: 'Button',
      components,
      callSite: { file: 'src/Counter.tsx', line: used.line, column: used.column, component: 'Counter' },
    })
    if (fragment) {
      // A component that returns a fragment: each element in it carries where the component is used.
      await annotateByKeyboard(page, '#price-help', 'the price is hard to read')
      await expect.poll(() => agent.annotation('the price is hard to read').then((a) => a.source, () => undefined), { timeout: 10_000 }).toMatchObject({
        file: 'src/components/ui/Price.tsx',
        ...positionOf(path.join(dir, 'src/components/ui/Price.tsx'), '<a class="price-help"'),
        exact: true,
        component: 'Price',
        components: ['Counter', 'Price'],
        callSite: { file: 'src/Counter.tsx', ...positionOf(path.join(dir, 'src/Counter.tsx'), '<Price'), component: 'Counter' },
      })
    }
    expect(errors).toEqual([])
  })

  it("vite build with sourceLocations: 'ids', vite preview: the keyboard annotates the shared button; the agent gets its exact file:line from the manifest", { timeout: 150_000 }, async () => {
    const dir = copyFixture(fixture, cleanups)
    await init(dir)
    const { page } = await chromium.newPage()
    await annotatesPreviewBuild(cleanups, page, dir, { file: 'src/components/ui/Button.tsx', noPaths: ['src/components/ui/Button.tsx', 'src/Counter.tsx'], initial: 'Add to basket (0)' })
  })
})
