/**
 * Source locations with real frameworks in real Chromium: Vite + React 19, Vue 3 and
 * Svelte 5 fixture apps (test/fixtures/apps) served by a Vite dev server with `marginalia/vite`;
 * a person annotates elements by click and the stored annotation's source.file/line must be the
 * element's real position in the fixture file — in a list, in a child component, in a shared UI
 * component (with the call site), and after an HMR edit that moved it down three lines.
 */
import { describe, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { createServer, type PluginOption, type ViteDevServer } from 'vite'
import react from '@vitejs/plugin-react'
import vue from '@vitejs/plugin-vue'
import { svelte } from '@sveltejs/vite-plugin-svelte'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateByClick, copyApp, overlayReady, positionOf } from '../../helpers/apps.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

async function serve(root: string, framework: PluginOption): Promise<{ vite: ViteDevServer; url: string; api: string }> {
  const plugin = marginalia({ port: 0 })
  const vite = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    clearScreen: false,
    cacheDir: path.join(root, '.vite-cache'),
    plugins: [framework, plugin],
    server: { host: '127.0.0.1', port: 0, strictPort: false },
  })
  cleanups.push(() => vite.close())
  await vite.listen()
  const { port } = vite.httpServer!.address() as AddressInfo
  return { vite, url: `http://127.0.0.1:${port}/`, api: (await plugin.ready())!.url }
}

async function open(url: string): Promise<Page> {
  const { page } = await chromium.newPage()
  await page.goto(url)
  await overlayReady(page)
  return page
}



describe.skipIf(!enabled)('source locations in real apps', () => {
  it('React 19: a list item, a child component, a components/ui/Button with its call site, and after an HMR edit', { timeout: 120_000 }, async () => {
    const root = copyApp('react', cleanups)
    const { url, api } = await serve(root, react())
    const page = await open(url)
    const app = path.join(root, 'src/App.tsx')

    const li = await annotateByClick(page, api, 'li.fruit-pear', 'pear is wrong')
    expect(li.source).toMatchObject({ file: 'src/App.tsx', ...positionOf(app, '<li key'), via: 'mark', exact: true, component: 'App' })

    const h2 = await annotateByClick(page, api, 'h2.card-title', 'title too big')
    expect(h2.source).toMatchObject({ file: 'src/Card.tsx', line: positionOf(path.join(root, 'src/Card.tsx'), '<h2').line, via: 'mark', component: 'Card', components: ['App', 'Card'] })

    const button = await annotateByClick(page, api, 'button.ui-button', 'sign in is grey')
    expect(button.source).toMatchObject({
      file: 'src/components/ui/Button.tsx',
      line: positionOf(path.join(root, 'src/components/ui/Button.tsx'), '<button').line,
      callSite: { file: 'src/App.tsx', line: positionOf(app, '<Button label').line },
    })

    // The inbox shows file:line as a link into the editor (the plugin gave the server the root).
    const inbox = await chromium.browser.newPage({ viewport: { width: 1100, height: 760 } })
    cleanups.push(() => inbox.close())
    await inbox.goto(`${api}/`)
    const buttonLine = positionOf(path.join(root, 'src/components/ui/Button.tsx'), '<button')
    const link = inbox.locator('.card', { hasText: 'sign in is grey' }).locator('.source-link').first()
    await eventually(() => link.getAttribute('href')).toBe(`vscode://file${encodeURI(`${root.split(path.sep).join('/')}/src/components/ui/Button.tsx:${buttonLine.line}:${buttonLine.column}`)}`)
    expect(await link.textContent()).toBe(`src/components/ui/Button.tsx:${buttonLine.line}`)
    expect(await inbox.locator('.card', { hasText: 'sign in is grey' }).locator('.source-call').textContent()).toBe(` used at src/App.tsx:${positionOf(app, '<Button label').line}`)
    if (process.env.MARGINALIA_SCREENSHOTS) await inbox.screenshot({ path: path.resolve(import.meta.dirname, '../../../docs/screenshots/inbox-source.png') })

    const before = positionOf(app, '<h1 id="title"')
    writeFileSync(app, readFileSync(app, 'utf8').replace('export function App() {', '// one\n// two\n// three\nexport function App() {'))
    await eventually(() => page.locator('h1#title').getAttribute('data-marginalia-source'), 20_000).toBe(`src/App.tsx:${before.line + 3}:${before.column}`)
    const h1 = await annotateByClick(page, api, 'h1#title', 'moved title')
    expect(h1.source).toMatchObject({ file: 'src/App.tsx', line: before.line + 3 })
  })

  it('Vue 3: a v-for item and an element of a child component', { timeout: 120_000 }, async () => {
    const root = copyApp('vue', cleanups)
    const { url, api } = await serve(root, vue())
    const page = await open(url)
    const li = await annotateByClick(page, api, 'li.fruit-plum', 'plum')
    expect(li.source).toMatchObject({ file: 'src/App.vue', ...positionOf(path.join(root, 'src/App.vue'), '<li v-for'), via: 'mark', exact: true })
    const h2 = await annotateByClick(page, api, 'h2.card-title', 'child')
    expect(h2.source).toMatchObject({ file: 'src/Child.vue', line: positionOf(path.join(root, 'src/Child.vue'), '<h2').line, component: 'Child' })
  })

  it('Svelte 5: an {#each} item and an element of a child component', { timeout: 120_000 }, async () => {
    const root = copyApp('svelte', cleanups)
    const { url, api } = await serve(root, svelte())
    const page = await open(url)
    const li = await annotateByClick(page, api, 'li.fruit-apple', 'apple')
    expect(li.source).toMatchObject({ file: 'src/App.svelte', ...positionOf(path.join(root, 'src/App.svelte'), '<li class'), via: 'mark', exact: true })
    const h2 = await annotateByClick(page, api, 'h2.card-title', 'child')
    expect(h2.source).toMatchObject({ file: 'src/Child.svelte', line: positionOf(path.join(root, 'src/Child.svelte'), '<h2').line })
  })
})
