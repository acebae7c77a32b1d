/**
 * Source locations in Next.js: a Next.js App Router app (the real `next` package,
 * installed into a temporary directory) on `next dev --turbopack`, with `marginalia/loader` in
 * `turbopack.rules` as docs/guide/frameworks.md shows; the server-rendered HTML carries the marks, and a click
 * in Chromium stores the element's real file:line (a list item rendered by a server component,
 * a button of a client component in components/ui with the call site in the page).
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { createMemoryStore, startHttpServer } from '../../../src/index.js'
import { useChromium } from '../../helpers/chromium.js'
import { eventually } from '../../helpers/eventually.js'
import { annotateByClick, overlayReady, positionOf } from '../../helpers/apps.js'
import { freePort } from '../../helpers/ports.js'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '../../..')
const NEXT_VERSION = '16.4.6'
const chromium = useChromium()
const { enabled, cleanups } = chromium

let dir: string
let next: ChildProcess | undefined

const FILES: Record<string, string> = {
  'app/layout.jsx': `export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <head>
        <script src={process.env.MARGINALIA_API + '/overlay.js'} defer></script>
      </head>
      <body>{children}</body>
    </html>
  )
}
`,
  'app/page.jsx': `import { Button } from './components/ui/Button'

const fruits = ['apple', 'pear', 'plum']

export default function Page() {
  return (
    <main className="app">
      <h1 id="title">Fruit shop</h1>
      <ul>
        {fruits.map((f) => (
          <li key={f} className={\`fruit fruit-\${f}\`}>
            {f}
          </li>
        ))}
      </ul>
      <form className="login">
        <Button label="Sign in" />
      </form>
    </main>
  )
}
`,
  'app/shop/page.jsx': `'use client'
import { Button } from '../components/ui/Button'

export default function Shop() {
  return (
    <section className="shop">
      <Button label="Buy now" />
    </section>
  )
}
`,
  'app/components/ui/Button.jsx': `'use client'
export function Button({ label }) {
  return <button type="button" className="ui-button">{label}</button>
}
`,
}

beforeAll(async () => {
  if (!enabled) return
  dir = mkdtempSync(path.join(os.tmpdir(), 'marginalia-next-'))
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'next-app', private: true, version: '0.0.0' }))
  // The frameworks guide's set-up, with the loader's path (the package is this repository, not installed here).
  writeFileSync(
    path.join(dir, 'next.config.mjs'),
    `export default {\n  turbopack: {\n    rules: { '*.{jsx,tsx}': { loaders: [{ loader: ${JSON.stringify(path.join(ROOT, 'dist', 'integrations', 'source-loader.cjs'))} }] } },\n  },\n}\n`,
  )
  for (const [file, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    writeFileSync(path.join(dir, file), text)
  }
  await run('npm', ['i', `next@${NEXT_VERSION}`, 'react@19', 'react-dom@19', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  })
}, 300_000)

// Removing a Next.js install (tens of thousands of files) takes a while on a busy machine.
afterAll(() => {
  next?.kill('SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
}, 120_000)


describe.skipIf(!enabled)('source locations in Next.js', () => {
  it('next dev --turbopack with marginalia/loader: marks in the server-rendered HTML, file:line of a list item and of a components/ui button with its call site', { timeout: 180_000 }, async () => {
    const store = createMemoryStore()
    const http = await startHttpServer(store, { port: 0, log: () => {}, sources: { root: dir } })
    cleanups.push(async () => {
      await http.close()
      await store.close()
    })
    const port = await freePort()
    let out = ''
    next = spawn(process.execPath, [path.join(dir, 'node_modules/next/dist/bin/next'), 'dev', '--turbopack', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: dir,
      env: { ...process.env, MARGINALIA_API: http.url, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'development' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    next.stdout!.on('data', (d: Buffer) => (out += d))
    next.stderr!.on('data', (d: Buffer) => (out += d))
    const url = `http://127.0.0.1:${port}/`
    try {
      await eventually(async () => {
        const res = await fetch(url).catch(() => undefined)
        return res?.ok ? await res.text() : ''
      }, 90_000).toContain('fruit-pear')
    } catch (e) {
      throw new Error(`next dev did not serve the page: ${String(e)}\n${out}`)
    }
    const page0 = await (await fetch(url)).text()
    const pageFile = path.join(dir, 'app/page.jsx')
    const li = positionOf(pageFile, '<li key')
    expect(page0).toContain(`data-marginalia-source="app/page.jsx:${li.line}:${li.column}"`)

    const { page } = await chromium.newPage()
    await page.goto(url)
    await overlayReady(page)
    const pear = await annotateByClick(page, http.url, 'li.fruit-pear', 'pear (next)')
    expect(pear.source).toMatchObject({ file: 'app/page.jsx', ...li, via: 'mark', exact: true })
    const button = await annotateByClick(page, http.url, 'button.ui-button', 'button (next)')
    expect(button.source).toMatchObject({ file: 'app/components/ui/Button.jsx', line: positionOf(path.join(dir, 'app/components/ui/Button.jsx'), '<button').line })
    // The page is a Server Component: its owner stack names the server's chunks, whose maps the
    // overlay gets from the dev server's /__nextjs_source-map, so the call site is exact there too.
    expect(button.source?.callSite).toMatchObject({ file: 'app/page.jsx', line: positionOf(pageFile, '<Button label').line })

    // In a Client Component the call site is exact: React's owner stack mapped through Turbopack's source maps.
    await page.goto(`${url}shop`)
    await overlayReady(page)
    const buy = await annotateByClick(page, http.url, 'section.shop button.ui-button', 'buy (next client)')
    const shop = path.join(dir, 'app/shop/page.jsx')
    expect(buy.source).toMatchObject({ file: 'app/components/ui/Button.jsx', callSite: { file: 'app/shop/page.jsx', line: positionOf(shop, '<Button label').line } })
  })
})
