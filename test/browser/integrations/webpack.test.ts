/**
 * Source locations from a real webpack build: the React fixture app bundled by webpack 5
 * in development mode with `marginalia/webpack` (TSX through esbuild-loader), the bundle served on
 * its own origin with the overlay's script tag; a click in Chromium stores the element's real
 * file:line, a shared component's call site included. And React rendered on the server from the
 * same marked modules, then hydrated in the browser: no hydration warning, and the locations hold.
 */
import { describe, expect, it } from 'vitest'
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import webpack, { type Configuration } from 'webpack'
import { marginaliaWebpack } from '../../../src/integrations/webpack.js'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { servePages } from '../../helpers/page.js'
import { annotateByClick, copyApp, overlayReady, positionOf } from '../../helpers/apps.js'

const chromium = useChromium()
const { enabled, cleanups } = chromium

/**
 * Bundle `entry` of the app at `root` with webpack (development, with a source map as a dev set-up
 * has one: the overlay maps React's component stacks through it) and the marking plugin; the bundle's code and map.
 */
async function bundle(root: string, entry: string, target: 'web' | 'node'): Promise<{ code: string; map: string }> {
  const out = path.join(root, `.webpack-${target}`)
  mkdirSync(out, { recursive: true })
  const config: Configuration = {
    mode: 'development',
    context: root,
    target,
    entry: path.join(root, entry),
    devtool: target === 'web' ? 'source-map' : false,
    output: { path: out, filename: 'bundle.js', ...(target === 'node' ? { library: { type: 'commonjs2' } } : {}) },
    resolve: { extensions: ['.tsx', '.ts', '.js'], extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } },
    module: { rules: [{ test: /\.tsx?$/, loader: 'esbuild-loader', options: { jsx: 'automatic', target: 'es2022' } }] },
    plugins: [marginaliaWebpack()],
    externals: target === 'node' ? { react: 'commonjs react', 'react-dom/server': 'commonjs react-dom/server' } : {},
    cache: false,
    infrastructureLogging: { level: 'error' },
  }
  const stats = await new Promise<webpack.Stats>((resolve, reject) =>
    webpack(config, (err, s) => {
      if (err || !s) reject(err ?? new Error('webpack gave no stats'))
      else resolve(s)
    }),
  )
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }))
  const map = path.join(out, 'bundle.js.map')
  return { code: readFileSync(path.join(out, 'bundle.js'), 'utf8'), map: target === 'web' ? readFileSync(map, 'utf8') : '' }
}

async function marginaliaServer(root: string): Promise<string> {
  const store = createMemoryStore()
  const http = await startHttpServer(store, { port: 0, log: () => {}, sources: { root } })
  cleanups.push(async () => {
    await http.close()
    await store.close()
  })
  return http.url
}


/** The page, its bundle and the bundle's source map, on their own origin (as a dev server serves them). */
async function open(html: string, built: { code: string; map: string }, logs: string[]): Promise<Page> {
  const pages = await servePages({ '/': html, '/bundle.js': built.code, '/bundle.js.map': built.map }, cleanups)
  const { page } = await chromium.newPage()
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`))
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`))
  await page.goto(pages.origin + '/')
  await overlayReady(page)
  return page
}

describe.skipIf(!enabled)('source locations from a webpack build', () => {
  it('webpack 5 + marginalia/webpack: a list item and a shared component with its call site', { timeout: 120_000 }, async () => {
    const root = copyApp('react', cleanups)
    const built = await bundle(root, 'src/main.tsx', 'web')
    expect(built.code).toContain('data-marginalia-source')
    const api = await marginaliaServer(root)
    const logs: string[] = []
    const page = await open(`<!doctype html><html><head><title>webpack app</title><script src="${api}/overlay.js" defer></script></head><body><div id="root"></div><script src="/bundle.js"></script></body></html>`, built, logs)
    await page.locator('li.fruit-pear').waitFor({ timeout: 20_000 }).catch(() => {
      throw new Error(`the webpack app did not render:\n${logs.join('\n')}`)
    })
    const app = path.join(root, 'src/App.tsx')
    const li = await annotateByClick(page, api, 'li.fruit-pear', 'pear (webpack)')
    expect(li.source).toMatchObject({ file: 'src/App.tsx', ...positionOf(app, '<li key'), via: 'mark', exact: true, component: 'App' })
    const button = await annotateByClick(page, api, 'button.ui-button', 'button (webpack)')
    expect(button.source).toMatchObject({
      file: 'src/components/ui/Button.tsx',
      line: positionOf(path.join(root, 'src/components/ui/Button.tsx'), '<button').line,
      callSite: { file: 'src/App.tsx', line: positionOf(app, '<Button label').line },
    })
  })

  it('server-rendered React from the marked modules hydrates without a mismatch, and the locations hold', { timeout: 120_000 }, async () => {
    const root = copyApp('react', cleanups)
    // The same App for both sides: a server entry that renders it to a string, a client entry that hydrates it.
    const { writeFileSync } = await import('node:fs')
    writeFileSync(path.join(root, 'src/server.tsx'), "import { renderToString } from 'react-dom/server'\nimport { App } from './App.tsx'\nexport const html = (): string => renderToString(<App />)\n")
    writeFileSync(path.join(root, 'src/client.tsx'), "import { hydrateRoot } from 'react-dom/client'\nimport { App } from './App.tsx'\nhydrateRoot(document.getElementById('root')!, <App />, { onRecoverableError: (e) => console.error('recoverable: ' + String(e)) })\n")
    const { code: serverCode } = await bundle(root, 'src/server.tsx', 'node')
    const client = await bundle(root, 'src/client.tsx', 'web')
    const serverModule = { exports: {} as { html?: () => string } }
    const { createRequire } = await import('node:module')
    new Function('module', 'exports', 'require', serverCode)(serverModule, serverModule.exports, createRequire(import.meta.url))
    const rendered = serverModule.exports.html!()
    expect(rendered).toContain('data-marginalia-source="src/App.tsx:')

    const api = await marginaliaServer(root)
    const logs: string[] = []
    const page = await open(
      `<!doctype html><html><head><title>SSR app</title><script src="${api}/overlay.js" defer></script></head><body><div id="root">${rendered}</div><script src="/bundle.js"></script></body></html>`,
      client,
      logs,
    )
    // Hydration is done when React attached its handlers: the counter button counts.
    await page.locator('li.fruit-pear').waitFor({ timeout: 20_000 })
    await eventually(() => page.evaluate("Object.keys(document.getElementById('root')).some((k) => k.startsWith('__reactContainer'))")).toBe(true)
    const app = path.join(root, 'src/App.tsx')
    const li = await annotateByClick(page, api, 'li.fruit-pear', 'pear (ssr)')
    expect(li.source).toMatchObject({ file: 'src/App.tsx', ...positionOf(app, '<li key'), via: 'mark' })
    expect(logs.filter((l) => /hydrat|did not match|recoverable/i.test(l))).toEqual([])
  })
})
