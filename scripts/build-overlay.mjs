// Build the browser side into dist/overlay/ (what `marginalia serve` serves):
//   overlay.js  — the drop-in overlay's core (src/browser/overlay/main.ts): what a page needs before
//                 the person annotates
//   chunks/     — the rest of the overlay, ES modules fetched on first use (src/browser/overlay/chunks):
//                 `<name>-<HASH>.js`, content-hashed, so the server lets browsers keep them a year
//   inbox.js    — the inbox page's script (src/browser/inbox/inbox.ts)
//   early.js    — the page log's recorder alone, run before the page's scripts (src/browser/early/main.ts)
//   loader.js   — the head snippet's script: the recorder, then overlay.js (src/browser/early/loader.ts)
//   index.html  — the inbox page (src/browser/inbox/index.html), served at /
//   app.html    — the inbox as an MCP App (src/browser/app): one self-contained document, its
//                 script inlined, that the MCP server hands to hosts that render apps
// Framework-free TypeScript bundled by esbuild as classic scripts (IIFE): nothing leaks into the
// page's globals but window.Marginalia; overlay.js imports its chunks with import() by URL.
// Every script and page gets its brotli and gzip siblings (x.js.br, x.js.gz), which the server sends.
import { build, transform } from 'esbuild'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import { minify as terser } from 'terser'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.join(root, 'dist', 'overlay')
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
mkdirSync(out, { recursive: true })

/**
 * `import css from './x.css'` gives the stylesheet as a string, minified: the overlay's shadow-root
 * stylesheet is 13.1 KB as written and 11.0 KB minified, the biggest single part of overlay.js.
 */
// Browsers from 2021 on: shadow DOM, EventSource, fetch, CSS.escape, optional chaining.
const TARGET = ['chrome90', 'firefox90', 'safari15', 'edge90']

const minifiedCss = {
  name: 'minified-css-text',
  setup(b) {
    b.onLoad({ filter: /\.css$/ }, async (args) => {
      const { code } = await transform(readFileSync(args.path, 'utf8'), { loader: 'css', minify: true, target: TARGET })
      return { contents: `export default ${JSON.stringify(code.trim())}`, loader: 'js' }
    })
  },
}

/**
 * The overlay's chunks: one ES module per entry of src/browser/overlay/chunks/table.ts (what they
 * share goes into `shared-<HASH>.js`), written first so overlay.js can name their files.
 */
const CHUNK_ENTRIES = {
  annotate: path.join(root, 'src/browser/overlay/chunks/annotate.ts'),
  extras: path.join(root, 'src/browser/overlay/chunks/extras.ts'),
  sender: path.join(root, 'src/browser/overlay/chunks/sender.ts'),
}
/**
 * Chunks built alone, sharing nothing: `early` (the recorders, fetched as a page with the tag alone
 * loads) is one request, not three; `ui` (the panels' looks, fetched with annotate mode) and
 * `prompts` (rarely fetched) keep the few small modules they share with `annotate` to themselves,
 * so that annotate mode is two modules to import (its own and what it shares with `extras`), not
 * five: each import() costs the page's main thread a request's set-up.
 */
const ALONE_ENTRIES = {
  early: path.join(root, 'src/browser/overlay/chunks/early.ts'),
  ui: path.join(root, 'src/browser/overlay/chunks/ui.ts'),
  prompts: path.join(root, 'src/browser/overlay/chunks/prompts.ts'),
}
rmSync(path.join(out, 'chunks'), { recursive: true, force: true })
const chunkOptions = (entryPoints, splitting) => ({
  entryPoints,
  outdir: path.join(out, 'chunks'),
  entryNames: '[name]-[hash]',
  chunkNames: 'shared-[hash]',
  bundle: true,
  splitting,
  format: 'esm',
  platform: 'browser',
  target: TARGET,
  tsconfig: path.join(root, 'tsconfig.overlay.json'),
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  metafile: true,
  define: { __MARGINALIA_VERSION__: JSON.stringify(version) },
  plugins: [minifiedCss],
  logLevel: 'warning',
})
const chunkBuilds = [await build(chunkOptions(CHUNK_ENTRIES, true)), ...(await Promise.all(Object.entries(ALONE_ENTRIES).map(([name, entry]) => build(chunkOptions({ [name]: entry }, false)))))]
const ALL_CHUNKS = { ...CHUNK_ENTRIES, ...ALONE_ENTRIES }
/** Entry name → its file under chunks/, from what esbuild wrote. */
const chunkFiles = {}
/** Entry name → the shared chunks it imports (statically, all the way down), as files under chunks/. */
const chunkDeps = {}
const outputs = Object.fromEntries(chunkBuilds.flatMap((b) => Object.entries(b.metafile.outputs)))
const outFile = (file) => path.relative(out, path.resolve(root, file)).split(path.sep).join('/')
const staticImports = (file, seen = new Set()) => {
  for (const i of outputs[file]?.imports ?? []) {
    if (i.kind !== 'import-statement' || seen.has(i.path)) continue
    seen.add(i.path)
    staticImports(i.path, seen)
  }
  return seen
}
for (const [file, meta] of Object.entries(outputs)) {
  const entry = meta.entryPoint && Object.entries(ALL_CHUNKS).find(([, p]) => path.resolve(root, meta.entryPoint) === p)
  if (!entry) continue
  chunkFiles[entry[0]] = outFile(file)
  chunkDeps[entry[0]] = [...staticImports(file)].map(outFile)
}
const table = readFileSync(path.join(root, 'src/browser/overlay/chunks/table.ts'), 'utf8')
for (const name of Object.keys(ALL_CHUNKS)) {
  if (!chunkFiles[name]) throw new Error(`the chunk ${name} was not written`)
  if (!table.includes(`${name}: () => import('./${name}.js')`)) throw new Error(`src/browser/overlay/chunks/table.ts does not load the chunk ${name} as scripts/build-overlay.mjs expects`)
}
if (!table.includes("export const CHUNKS_BUILD = 'inline'")) throw new Error('src/browser/overlay/chunks/table.ts does not export CHUNKS_BUILD as scripts/build-overlay.mjs expects')
/** The chunk files' names (content-hashed) as one short fingerprint: a page that remembers it knows its browser has these very files. */
const chunksBuild = createHash('sha256').update(JSON.stringify(chunkFiles)).digest('hex').slice(0, 12)

/**
 * In overlay.js, chunks/table.ts imports the chunk files by URL instead of bundling them in. The
 * shared chunks a chunk imports are asked for at the same moment as the chunk (one round trip, not
 * one per level of imports); the module map fetches each once, and the chunk's own imports wait
 * for those same requests.
 */
const chunksByUrl = {
  name: 'chunks-by-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]overlay[\\/]chunks[\\/]table\.ts$/ }, () => ({
      contents: `export const CHUNKS_BUILD = ${JSON.stringify(chunksBuild)}
export function chunkLoaders(base) {
  const url = (file, attempt) => new URL(attempt > 0 ? file + '?attempt=' + attempt : file, base).href
  const at = (file, deps, attempt) => {
    for (const dep of deps) import(url(dep, 0)).catch(() => {})
    return import(url(file, attempt))
  }
  return { ${Object.entries(chunkFiles)
    .map(([name, file]) => `${name}: (attempt) => at(${JSON.stringify(file)}, ${JSON.stringify(chunkDeps[name])}, attempt)`)
    .join(', ')} }
}`,
      loader: 'js',
    }))
  },
}

await build({
  entryPoints: {
    overlay: path.join(root, 'src/browser/overlay/main.ts'),
    inbox: path.join(root, 'src/browser/inbox/inbox.ts'),
    early: path.join(root, 'src/browser/early/main.ts'),
    loader: path.join(root, 'src/browser/early/loader.ts'),
  },
  outdir: out,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: TARGET,
  // The browser's own compiler options (tsconfig.overlay.json), not the Node ones.
  tsconfig: path.join(root, 'tsconfig.overlay.json'),
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  define: { __MARGINALIA_VERSION__: JSON.stringify(version) },
  banner: { js: `/* Marginalia overlay ${version} */` },
  plugins: [minifiedCss, chunksByUrl],
  logLevel: 'warning',
})
copyFileSync(path.join(root, 'src/browser/inbox/index.html'), path.join(out, 'index.html'))

/**
 * zod (which the MCP SDK's client, under the app's `App`, validates with) re-exports every locale
 * as a namespace that cannot be tree-shaken: 264 KB of the app's script. zod itself configures
 * English only, so the app gets English only.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({ contents: "export { default as en } from './en.js'", resolveDir: path.dirname(args.path), loader: 'js' }))
  },
}

// The MCP App: the host loads it in a sandboxed frame with a CSP of its own (no network by
// default), so nothing may be fetched: the script goes inside the document.
const appBuild = await build({
  entryPoints: [path.join(root, 'src/browser/app/main.ts')],
  write: false,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: TARGET,
  tsconfig: path.join(root, 'tsconfig.overlay.json'),
  minify: true,
  legalComments: 'none',
  define: { __MARGINALIA_VERSION__: JSON.stringify(version) },
  plugins: [minifiedCss, englishOnly],
  logLevel: 'warning',
})
const appScript = appBuild.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1')
const appPage = readFileSync(path.join(root, 'src/browser/app/index.html'), 'utf8')
if (!appPage.includes('<!--APP_SCRIPT-->')) throw new Error('src/browser/app/index.html lost its <!--APP_SCRIPT--> placeholder')
writeFileSync(path.join(out, 'app.html'), appPage.replace('<!--APP_SCRIPT-->', () => `<script>${appScript}</script>`))

/**
 * A second minification of every script a page loads, by terser: esbuild bundles and minifies in
 * one fast pass; terser's compressor (two passes) and mangler take a further ~4 % off what a page
 * fetches before anyone annotates (overlay.js: −0.8 KB brotli). The source maps are chained: each
 * still points at src/, with the sources inside. The banner (the overlay's version) is kept.
 *
 * The scripts a page runs as it loads (overlay.js, loader.js, early.js, the inbox and the `early`
 * chunk) start with V8's compile hint `//# allFunctionsCalledOnLoad` (Chromium 136 and later;
 * other engines read a comment): their functions are compiled as the script streams in, off the
 * page's main thread, instead of each on that thread the first time it runs, after a first pass
 * that only found where it ends. The chunks fetched when a feature is first used go without it:
 * compiling all of annotate mode before it starts made the first press slower (1 000-row page,
 * 6 rounds: 87 → 100 ms to the picker), and a press waits on that compile.
 */
for (const dir of [out, path.join(out, 'chunks')]) {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.js')) continue
    const file = path.join(dir, name)
    const code = readFileSync(file, 'utf8')
    const mapFile = `${file}.map`
    const hasMap = existsSync(mapFile)
    const result = await terser(code, {
      module: dir !== out,
      compress: { passes: 2 },
      mangle: true,
      format: { comments: /^ Marginalia overlay /, ...(dir === out || name.startsWith('early-') ? { preamble: '//# allFunctionsCalledOnLoad' } : {}) },
      ...(hasMap ? { sourceMap: { content: readFileSync(mapFile, 'utf8'), url: `${name}.map`, includeSources: true } } : {}),
    })
    writeFileSync(file, result.code)
    if (hasMap) writeFileSync(mapFile, typeof result.map === 'string' ? result.map : JSON.stringify(result.map))
  }
}

/**
 * The brotli and gzip siblings of every file a page loads (the server sends them). Source maps are
 * left out: only developer tools ask for them, and the server compresses one when it is asked.
 */
for (const dir of [out, path.join(out, 'chunks')]) {
  for (const name of readdirSync(dir)) {
    if (!/\.(js|html|css|json)$/.test(name)) continue
    const file = path.join(dir, name)
    const bytes = readFileSync(file)
    writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }))
    writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }))
  }
}
