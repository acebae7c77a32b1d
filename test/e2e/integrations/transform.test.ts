/**
 * The marking transform itself: what it marks and what it never touches, source maps,
 * production builds byte-identical with the plugin, and an 'ids' preview build whose manifest
 * resolves, through the server, to the same file:line as the dev marks.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { build } from 'vite'
import react from '@vitejs/plugin-react'
import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping'
import marginalia from '../../../src/integrations/vite/plugin.js'
import { markModule } from '../../../src/integrations/shared/source-marks.js'
import { readSnippet } from '../../../src/sources/snippet.js'
import type { Annotation } from '../../../src/store/model.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { structured } from '../../helpers/mcp.js'
import { copyApp } from '../../helpers/apps.js'
import { useCleanups } from '../../helpers/cleanup.js'
import { startMarginalia } from '../../helpers/page.js'

const cleanups = useCleanups()

const ROOT = '/app'
const TSX = `import { Button } from './ui'
export function A({ items }: { items: string[] }) {
  return (
    <>
      <div className="a">
        {items.map((i) => <li key={i}>{i}</li>)}
        <Button>ok</Button>
        <my-element />
      </div>
    </>
  )
}
`

describe('the marking transform', () => {
  it('marks host elements only (lower-case tags), with file:line:column, and keeps the source map right', async () => {
    const out = (await markModule(TSX, '/app/src/A.tsx', ROOT))!
    expect(out.code).toContain('<div data-marginalia-source="src/A.tsx:5:7" className="a">')
    expect(out.code).toContain('<li data-marginalia-source="src/A.tsx:6:27" key={i}>')
    expect(out.code).toContain('<my-element data-marginalia-source="src/A.tsx:8:9" />')
    expect(out.code).toContain('<Button>ok</Button>')
    expect(out.code).toContain('<>')
    // A position after the inserted attribute maps back to the original line and column.
    const generated = out.code.split('\n')
    const line = generated.findIndex((l) => l.includes('className="a"'))
    const col = generated[line]!.indexOf('className')
    const orig = originalPositionFor(new TraceMap(out.map as unknown as ConstructorParameters<typeof TraceMap>[0]), { line: line + 1, column: col })
    expect(orig).toMatchObject({ source: 'src/A.tsx', line: 5, column: TSX.split('\n')[4]!.indexOf('className') })
  })

  it('never marks node_modules, excluded files, sub-requests, or anything when off', async () => {
    expect(await markModule(TSX, '/app/node_modules/lib/A.tsx', ROOT)).toBeUndefined()
    expect(await markModule(TSX, '/elsewhere/A.tsx', ROOT)).toBeUndefined()
    expect(await markModule(TSX, '/app/src/A.tsx', ROOT, { sourceLocations: false })).toBeUndefined()
    expect(await markModule(TSX, '/app/src/gen/A.tsx', ROOT, { exclude: ['src/gen/**'] })).toBeUndefined()
    expect(await markModule(TSX, '/app/src/A.tsx', ROOT, { include: ['lib/**'] })).toBeUndefined()
    expect(await markModule(TSX, '/app/src/A.tsx', ROOT, { include: ['src/**/*.tsx'] })).toBeDefined()
    expect(await markModule('<template><p/></template>', '/app/src/A.vue?vue&type=style&index=0', ROOT)).toBeUndefined()
  })

  it('marks Vue templates and Svelte markup by their compilers (elements, not components)', async () => {
    const vue = (await markModule('<script setup>\nimport X from "./X.vue"\n</script>\n<template>\n  <div>\n    <X />\n    <span v-if="a">a</span>\n  </div>\n</template>\n', '/app/src/A.vue', ROOT))!
    expect(vue.code).toContain('<div data-marginalia-source="src/A.vue:5:3">')
    expect(vue.code).toContain('<span data-marginalia-source="src/A.vue:7:5" v-if="a">')
    // A component keeps its props and attributes: only a vnode hook records where it is used, on its instance.
    expect(vue.code).toContain(`<X @vue:mounted="(v) => { if (v.component) v.component.__marginaliaCall = 'X@src/A.vue:6:5' }" />`)
    const svelte = (await markModule('<script>\n  import X from "./X.svelte"\n</script>\n\n<div>\n  {#if a}<p>a</p>{/if}\n  <X />\n</div>\n', '/app/src/A.svelte', ROOT))!
    expect(svelte.code).toContain('<div data-marginalia-source="src/A.svelte:5:1">')
    expect(svelte.code).toContain('<p data-marginalia-source="src/A.svelte:6:10">')
    expect(svelte.code).toContain('<X />')
  })

  it("Solid's JSX: each component element stamps its call site on what it returns; control flow and host elements are left alone", async () => {
    const code = 'export const A = () => (\n  <div>\n    <Show when={a}>\n      <Button label="x" />\n    </Show>\n  </div>\n)\n'
    const out = (await markModule(code, '/app/src/A.tsx', ROOT, { jsx: 'solid' }))!.code
    expect(out).toContain('<div data-marginalia-source="src/A.tsx:2:3">')
    expect(out).toContain('<Show when={a}>')
    expect(out).toMatch(/\{\(\(n, s\) => .*"data-marginalia-call", "Button@src\/A\.tsx:4:7".*\)\(<Button label="x" \/>\)\}/)
    // React's JSX: components untouched (fibers know their call sites).
    expect((await markModule(code, '/app/src/A.tsx', ROOT))!.code).not.toContain('data-marginalia-call')
    // An 'ids' build names no file: no call sites.
    expect((await markModule(code, '/app/src/A.tsx', ROOT, { jsx: 'solid', sourceLocations: 'ids' }))!.code).not.toContain('data-marginalia-call')
  })

  // Astro's compiler comes from the app: the Astro fixture's, when it is installed (`npm run fixtures astro`).
  const astroApp = path.resolve(import.meta.dirname, '../../fixtures/frameworks/astro')
  it.skipIf(!existsSync(path.join(astroApp, 'node_modules', '@astrojs', 'compiler')))(".astro: each tag of an imported .astro component passes its call site; the elements at the top of a template (a layout's <html> too) write it; an 'ids' build has none", async () => {
    const page = "---\nimport Button from '../components/ui/Button.astro';\nimport Island from '../components/Island.tsx';\n---\n\n<html lang=\"en\">\n\t<head><title>x</title></head>\n\t<body>\n\t\t<Button label=\"a\" />\n\t\t<Island client:load />\n\t</body>\n</html>\n"
    const out = (await markModule(page, path.join(astroApp, 'src/pages/index.astro'), astroApp))!.code
    expect(out).toContain('<Button data-marginalia-astro-call={"Button@src/pages/index.astro:9:3"} label="a" />')
    // An island's props reach the framework's component: left alone.
    expect(out).toContain('<Island client:load />')
    expect(out).toContain('<html data-marginalia-astro-call={Astro.props["data-marginalia-astro-call"] && "src/pages/index.astro|" + Astro.props["data-marginalia-astro-call"]} lang="en">')
    const button = '---\nconst { label } = Astro.props;\n---\n\n<button class="ui-button">{label}</button>\n<style>button { color: red }</style>\n'
    const marked = (await markModule(button, path.join(astroApp, 'src/components/ui/Button.astro'), astroApp))!.code
    expect(marked).toContain('<button data-marginalia-source="src/components/ui/Button.astro:5:1" data-marginalia-astro-call={Astro.props["data-marginalia-astro-call"] && "src/components/ui/Button.astro|" + Astro.props["data-marginalia-astro-call"]} class="ui-button">')
    // Astro processes a <style> or <script> by its attributes: never stamped.
    expect(marked).toContain('<style>button { color: red }</style>')
    const ids = (await markModule(page, path.join(astroApp, 'src/pages/index.astro'), astroApp, { sourceLocations: 'ids' }))?.code ?? page
    expect(ids).not.toContain('data-marginalia-astro-call')
  })

  it('a vite build is byte-identical with and without the plugin', { timeout: 120_000 }, async () => {
    const root = copyApp('react', cleanups)
    const outputs: Record<string, string>[] = []
    for (const plugins of [[react()], [react(), marginalia({ port: 0 })]]) {
      const outDir = path.join(root, `dist-${outputs.length}`)
      await build({ root, configFile: false, logLevel: 'silent', plugins, build: { outDir }, cacheDir: path.join(root, '.vite-cache') })
      outputs.push(Object.fromEntries(readdirSync(outDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => [path.relative(outDir, path.join(e.parentPath, e.name)), readFileSync(path.join(e.parentPath, e.name), 'utf8')])))
    }
    expect(Object.keys(outputs[0]!).length).toBeGreaterThan(1)
    expect(outputs[1]).toEqual(outputs[0])
    expect(Object.values(outputs[1]!).join('').includes('data-marginalia-source')).toBe(false)
  })

  it("an 'ids' build carries data-mid and writes a manifest beside the build that the server resolves to the dev file:line", { timeout: 120_000 }, async () => {
    const root = copyApp('react', cleanups)
    const outDir = path.join(root, 'dist')
    await build({ root, configFile: false, logLevel: 'silent', plugins: [react(), marginalia({ port: 0, sourceLocations: 'ids' })], build: { outDir }, cacheDir: path.join(root, '.vite-cache') })
    const js = readdirSync(path.join(outDir, 'assets')).filter((f) => f.endsWith('.js')).map((f) => readFileSync(path.join(outDir, 'assets', f), 'utf8')).join('')
    expect(js.includes('data-marginalia-source')).toBe(false)
    const manifestFile = path.join(root, 'marginalia-sources.json')
    expect(existsSync(manifestFile)).toBe(true)
    expect(existsSync(path.join(outDir, 'marginalia-sources.json'))).toBe(false)
    const manifest = (JSON.parse(readFileSync(manifestFile, 'utf8')) as { sources: Record<string, string> }).sources
    // The dev mark of the title, and the id the build gave the same element.
    const app = path.join(root, 'src/App.tsx')
    const dev = (await markModule(readFileSync(app, 'utf8'), app, root))!.code
    const devMark = /<h1 data-marginalia-source="([^"]+)"/.exec(dev)![1]!
    const [id] = Object.entries(manifest).find(([, loc]) => loc === devMark)!
    expect(new RegExp(`"data-mid":[\`"']${id}[\`"']`).test(js)).toBe(true)

    const { store, http } = await startMarginalia(cleanups, { sources: { root, manifest } })
    const session = await store.createSession({ url: 'https://preview.example.com/' })
    const res = await fetch(`${http.url}/api/sessions/${session.id}/annotations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: http.url },
      body: JSON.stringify({ comment: 'title', source: { file: `#${id}`, via: 'manifest', exact: true } }),
    })
    const stored = (await res.json()) as Annotation
    expect(res.status).toBe(201)
    expect(`${stored.source?.file}:${stored.source?.line}:${stored.source?.column}`).toBe(devMark)
    // get_annotation's snippet: the lines around it, the line itself marked.
    expect(readSnippet(stored.source, root)).toContain('>  9 |       <h1 id="title">Fruit shop</h1>')
    expect(readSnippet({ file: '../../etc/passwd', line: 1 }, root)).toBeUndefined()
    // The agent's get_annotation carries those lines (the server was given the root; its MCP endpoint hands it to the tools).
    const client = new Client({ name: 'test-client', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(http.mcpUrl)))
    cleanups.push(() => client.close())
    const got = structured<{ annotation: Annotation; sourceLines?: string }>(await client.callTool({ name: 'get_annotation', arguments: { id: stored.id } }) as CallToolResult)
    expect(got.annotation.source).toMatchObject({ file: 'src/App.tsx', line: 9 })
    expect(got.sourceLines).toContain('>  9 |       <h1 id="title">Fruit shop</h1>')
  })
})
