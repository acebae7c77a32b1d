// Bundle the `marginalia` command into one file (dist/marginalia.mjs). Loading one file instead
// of hundreds of modules takes the CLI's start-up from ~250 ms to ~140 ms on the bench machine;
// the library (dist/index.js) stays unbundled for embedders.
import { build } from 'esbuild'

await build({
  entryPoints: ['dist/cli.js'],
  outfile: 'dist/marginalia.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  // CommonJS dependencies (proper-lockfile, graceful-fs) call require() for Node built-ins.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __marginaliaRequire } from 'node:module'; const require = __marginaliaRequire(import.meta.url);" },
  logLevel: 'warning',
})

const { chmodSync } = await import('node:fs')
chmodSync('dist/marginalia.mjs', 0o755)
