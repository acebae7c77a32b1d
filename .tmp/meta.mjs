import { build } from 'esbuild'
const r = await build({ entryPoints: ['src/browser/overlay/main.ts'], bundle: true, format: 'iife', minify: true, write: false, metafile: true, tsconfig: 'tsconfig.overlay.json', loader: { '.css': 'text' }, define: { __MARGINALIA_VERSION__: '"x"' } })
const out = Object.values(r.metafile.outputs)[0]
const rows = Object.entries(out.inputs).map(([k, v]) => [k, v.bytesInOutput]).sort((a, b) => b[1] - a[1])
const groups = {}
for (const [k, b] of rows) { const g = k.includes('node_modules') ? k.split('node_modules/')[1].split('/')[0] : k.split('/').slice(0, 4).join('/'); groups[g] = (groups[g] ?? 0) + b }
console.log(Object.entries(groups).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v}\t${k}`).join('\n'))
console.log(rows.slice(0, 40).map(([k, v]) => `${v}\t${k}`).join('\n'))
