/**
 * Vue accuracy on create-vue's starter (test/fixtures/frameworks/vue: TypeScript, Vue Router, Vue
 * DevTools plugin): after `init --yes`, under `vite`, annotated by the keyboard, an agent started
 * from the config init wrote gets — a RouterLink (a library component, no mark of its own) at the
 * line of its own tag, not its parent's; slot content at the file it is written in with that
 * file's component (TheWelcome), not the slot owner's (WelcomeItem); a shared UI button's call site
 * at the exact line of its component tag, not the element around it. No warning or error in the page.
 * A preview build (`vite build` with `sourceLocations: 'ids'`, `vite preview`, the overlay's script
 * tag, `marginalia serve --sources`) gives the agent the button's exact file:line from the manifest;
 * the build init's config makes carries nothing of Marginalia.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../helpers/chromium.js'
import { agentFromConfig, annotateByKeyboard, copyFixture, freePort, init, overlayReady, outputOf, pageErrors, positionOf, annotatesPreviewBuild, runBin, untilHydrated } from './harness.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

describe.skipIf(!enabled)('Vue (create-vue)', () => {
  it('RouterLink at its own line, slot content in its own file and component, call site at the component tag', { timeout: 120_000 }, async () => {
    const dir = copyFixture('vue', cleanups)
    const setup = await init(dir)
    expect(setup.stdout).toContain('+     marginalia(),')
    const env = { MARGINALIA_PORT: String(await freePort()) }
    const port = await freePort()
    const dev = runBin(cleanups, dir, 'vite', ['--host', '127.0.0.1', '--port', String(port), '--strictPort'], env)
    await dev.waitFor('stdout', /Local:/, 60_000)

    const { page } = await chromium.newPage()
    const errors = pageErrors(page)
    const warnings: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'warning' && m.text().includes('[Vue warn]')) warnings.push(m.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await overlayReady(page, outputOf(dev))
    await untilHydrated(page, '#add-to-basket', (t) => t !== 'Add to basket (0)')

    await annotateByKeyboard(page, 'nav a[href="/about"]', 'about link')
    await annotateByKeyboard(page, 'a[href="https://vite.dev/guide/features.html"]', 'slot link')
    await annotateByKeyboard(page, '#add-to-basket', 'basket button')
    const agent = await agentFromConfig(cleanups, dir, env)
    const app = path.join(dir, 'src/App.vue')
    const welcome = path.join(dir, 'src/components/TheWelcome.vue')

    expect((await agent.annotation('about link')).source).toMatchObject({ file: 'src/App.vue', ...positionOf(app, '<RouterLink to="/about">'), component: 'RouterLink', exact: true })
    expect((await agent.annotation('slot link')).source).toMatchObject({
      file: 'src/components/TheWelcome.vue',
      ...positionOf(welcome, '<a href="https://vite.dev/guide/features.html"'),
      exact: true,
      component: 'TheWelcome',
    })
    const button = positionOf(path.join(dir, 'src/components/ui/BasketButton.vue'), '<button')
    expect((await agent.annotation('basket button')).source).toMatchObject({
      file: 'src/components/ui/BasketButton.vue',
      ...button,
      component: 'BasketButton',
      callSite: { file: 'src/components/TheWelcome.vue', ...positionOf(welcome, '<BasketButton'), component: 'TheWelcome' },
    })
    expect(errors).toEqual([])
    expect(warnings).toEqual([])
  })

  it("vite build with sourceLocations: 'ids', vite preview: the keyboard annotates the shared button; the agent gets its exact file:line from the manifest", { timeout: 150_000 }, async () => {
    const dir = copyFixture('vue', cleanups)
    await init(dir)
    const { page } = await chromium.newPage()
    await annotatesPreviewBuild(cleanups, page, dir, { file: 'src/components/ui/BasketButton.vue', noPaths: ['src/components/ui/BasketButton.vue', 'src/components/TheWelcome.vue', 'src/App.vue'], initial: 'Add to basket (0)' })
  })
})
