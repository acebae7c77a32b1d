// Bundle the `marginalia` command (dist/marginalia.mjs, one chunk per command and the HTTP server in
// a chunk that only `serve` loads). Loading a few files instead of hundreds of modules roughly halves the CLI's
// start-up; the library (dist/index.js) stays unbundled for embedders.
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { build } from 'esbuild'

// The built-in tools' JSON Schemas, computed now from the compiled sources and inlined, so a
// starting server does not convert zod schemas (see __MARGINALIA_BUILTIN_SCHEMAS__ in src/tools/publish.ts).
const { createMemoryStore } = await import('../dist/store/store.js')
const { createToolRegistry } = await import('../dist/tools/registry.js')
const store = createMemoryStore()
const schemas = Object.fromEntries(
  createToolRegistry(store, { profile: 'full' })
    .list()
    .map((t) => [t.name, { inputSchema: t.inputSchema, outputSchema: t.outputSchema }]),
)
await store.close()

// `import { z } from 'zod'` hands over zod's namespace as a value, which esbuild cannot tree-shake:
// every locale of every language came along (~370 KB of the ~790 KB of zod the command parsed at
// start-up). `import * as z from 'zod'` is the same namespace, read by static property access,
// which esbuild can shake; this rewrites the first form into the second in the compiled sources.
const zodNamespace = {
  name: 'zod-namespace',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined
      const source = await readFile(args.path, 'utf8')
      const contents = source.replace(/import \{([^}]*)\} from (['"])zod\2;?/g, (statement, names, quote) => {
        const list = names.split(',').map((n) => n.trim()).filter((n) => n !== '')
        const z = list.find((n) => /^z( as \w+)?$/.test(n))
        if (z === undefined) return statement
        const rest = list.filter((n) => n !== z)
        const namespace = `import * as ${z.split(' as ')[1] ?? 'z'} from ${quote}zod${quote};`
        return rest.length === 0 ? namespace : `${namespace} import { ${rest.join(', ')} } from ${quote}zod${quote};`
      })
      return { contents, loader: 'js' }
    })
  },
}

rmSync('dist/chunks', { recursive: true, force: true })
await build({
  entryPoints: { marginalia: 'dist/cli/main.js', 'integrations/vite/vite-worker': 'dist/integrations/vite/worker.js' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Not minified: error class names and stack traces in users' logs stay readable.
  minify: process.env.MARGINALIA_BUNDLE_MINIFY === '1',
  legalComments: 'none',
  define: { __MARGINALIA_BUILTIN_SCHEMAS__: JSON.stringify(schemas) },
  // rxjs resolves to its CommonJS build under the "node" condition, which cannot be
  // tree-shaken; its ES2015 build can (≈360 KB → ≈60 KB of code to parse at start-up).
  // The SDK's shims with Ajv loaded on first use (scripts/mcp-sdk-shims.mjs says why).
  alias: {
    rxjs: './node_modules/rxjs/dist/esm/index.js',
    'rxjs/operators': './node_modules/rxjs/dist/esm/operators/index.js',
    '@modelcontextprotocol/server/_shims': './scripts/mcp-sdk-shims.mjs',
    // jsonc-parser's UMD build (its "main") requires its modules by computed paths esbuild cannot
    // follow; its ES module build bundles.
    'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js',
  },
  plugins: [zodNamespace],
  // CommonJS dependencies (proper-lockfile, graceful-fs) call require() for Node built-ins.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __marginaliaRequire } from 'node:module'; const require = __marginaliaRequire(import.meta.url);" },
  logLevel: 'warning',
})
chmodSync('dist/marginalia.mjs', 0o755)

// The library for CommonJS: `require('marginalia')` and `require('marginalia/vite')` (a vite.config
// in a project without "type": "module"). Dependencies stay external except the ESM-only ones
// (lowdb, steno, magic-string, the Tasks extension's wire schemas of both generations), which require() cannot load on every Node 20 — and whose default
// export a require() of the ESM build would hand over as the module namespace, not the class.
const cjsShim = "const __marginaliaImportMetaUrl = require('node:url').pathToFileURL(__filename).href;"
// Each beside its ES module, so what a module finds beside itself (the Vite worker, the loader) is
// there for both.
for (const entry of ['index', 'integrations/vite/index', 'integrations/webpack', 'integrations/source-loader', 'integrations/next']) {
  await build({
    entryPoints: [`dist/${entry}.js`],
    outfile: `dist/${entry}.cjs`,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    external: ['vite'],
    alias: {
      lowdb: './node_modules/lowdb/lib/index.js',
      'lowdb/node': './node_modules/lowdb/lib/node.js',
      steno: './node_modules/steno/lib/index.js',
      'magic-string': './node_modules/magic-string/dist/index.mjs',
      // ESM-only, with an "import"-only export map: require() cannot resolve it at all.
      '@modelcontextprotocol/ext-tasks/core/v1': './node_modules/@modelcontextprotocol/ext-tasks/dist/core/v1/index.js',
      '@modelcontextprotocol/ext-tasks/core/v2': './node_modules/@modelcontextprotocol/ext-tasks/dist/core/v2/index.js',
    },
    define: { 'import.meta.url': '__marginaliaImportMetaUrl', __MARGINALIA_BUILTIN_SCHEMAS__: 'undefined' },
    banner: { js: cjsShim },
    legalComments: 'none',
    logLevel: 'warning',
  })
}

// Types for require(): the same declarations under dist/cjs, beside a package.json that says
// "commonjs", so TypeScript reads them as CommonJS in a CommonJS project (`moduleResolution: node16`
// or `nodenext`) instead of reporting that an ES module cannot be require()d.
rmSync('dist/cjs', { recursive: true, force: true })
for (const file of readdirSync('dist', { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts') || file.startsWith('cjs')) continue
  mkdirSync(path.join('dist/cjs', path.dirname(file)), { recursive: true })
  copyFileSync(path.join('dist', file), path.join('dist/cjs', file))
}
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n')
