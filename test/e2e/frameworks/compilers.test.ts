/**
 * The marking transform parses Svelte and Astro files with the framework's own compiler, the very
 * module the framework's Vite plugin imports — not a second copy: Svelte's compiler has a separate
 * bundle for `require` (~100 ms to load), Astro's synchronous entry compiles its WebAssembly a
 * second time (~300 ms), both before the dev server's first page. Run in a fresh Node process in
 * the installed fixture app, as the dev server would: the framework's compiler imported first, then
 * a file marked; no CommonJS copy of the compiler may have been loaded.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const REPO = path.resolve(import.meta.dirname, '../../..')
const MARKS = path.join(REPO, 'dist', 'integrations', 'shared', 'source-marks.js')
const app = (name: string) => path.join(REPO, 'test', 'fixtures', 'frameworks', name)
const installed = (name: string, pkg: string) => existsSync(path.join(app(name), 'node_modules', pkg, 'package.json'))

/** In the app `name`: import `compiler` as its framework does, mark `source` as `file`; what was marked and which CommonJS files were loaded. */
function markIn(name: string, compiler: string, file: string, source: string): { code: string; commonjs: string[] } {
  const script = `
import { createRequire } from 'node:module'
await import(${JSON.stringify(compiler)})
const { markModule } = await import(${JSON.stringify(MARKS)})
const out = await markModule(${JSON.stringify(source)}, ${JSON.stringify(path.join(app(name), file))}, process.cwd(), {})
const commonjs = Object.keys(createRequire(process.cwd() + '/package.json').cache)
process.stdout.write(JSON.stringify({ code: out?.code ?? '', commonjs }))
`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app(name), encoding: 'utf8', timeout: 60_000 })) as { code: string; commonjs: string[] }
}

describe('the marking uses the framework\'s own compiler module', () => {
  it.skipIf(!installed('sveltekit', 'svelte'))('Svelte: the ESM compiler vite-plugin-svelte imports, not the require bundle', { timeout: 60_000 }, () => {
    const { code, commonjs } = markIn('sveltekit', 'svelte/compiler', 'src/lib/X.svelte', '<p>hi</p>')
    expect(code).toBe('<p data-marginalia-source="src/lib/X.svelte:1:1">hi</p>')
    expect(commonjs.filter((f) => f.includes(`${path.sep}svelte${path.sep}`))).toEqual([])
  })

  it.skipIf(!installed('astro', '@astrojs/compiler'))('Astro: the asynchronous compiler Astro compiles with, not the synchronous entry', { timeout: 60_000 }, () => {
    const { code, commonjs } = markIn('astro', '@astrojs/compiler', 'src/components/X.astro', '---\n---\n<p>hi</p>\n')
    expect(code).toContain('<p data-marginalia-source="src/components/X.astro:3:1"')
    expect(commonjs.filter((f) => f.includes('@astrojs'))).toEqual([])
  })
})
