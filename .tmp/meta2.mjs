import { build, transform } from 'esbuild'
import { readFileSync } from 'node:fs'
const css = { name: 'css', setup(b) { b.onLoad({ filter: /\.css$/ }, async (a) => ({ contents: `export default ${JSON.stringify((await transform(readFileSync(a.path, 'utf8'), { loader: 'css', minify: true })).code)}`, loader: 'js' })); b.onLoad({ filter: /chunks[\\/]table\.ts$/ }, () => ({ contents: 'export function chunkLoaders(b){return {extras:()=>import(b)}}', loader: 'js' })) } }
const r = await build({ entryPoints: [process.argv[2] ?? 'src/browser/overlay/main.ts'], bundle: true, format: 'iife', minify: true, write: false, metafile: true, tsconfig: 'tsconfig.overlay.json', plugins: [css], define: { __MARGINALIA_VERSION__: '"x"' }, logLevel: 'silent' })
const out = Object.values(r.metafile.outputs)[0]
const rows = Object.entries(out.inputs).map(([k, v]) => [k, v.bytesInOutput]).sort((a, b) => b[1] - a[1])
console.log('total', out.bytes)
console.log(rows.slice(0, 45).map(([k, v]) => `${v}\t${k}`).join('\n'))
