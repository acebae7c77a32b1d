/**
 * `npm run test:fast`: the inner loop. Unit and in-process tests only, with no build first: a test
 * file is left out when it, or a test module it imports, drives Chromium, runs the built package
 * (`dist/`, the CLI, a fixture process, an npm install) or needs PostgreSQL, or is one of the long
 * load runs listed below. `npm test` (build, lint, typecheck, every test) stays the full gate.
 */
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'

const root = import.meta.dirname

/** What puts a test file outside the fast run, and why. */
const SLOW_MARKERS: [RegExp, string][] = [
  [/\buseChromium\b|\blaunchChromium\b/, 'drives Chromium'],
  [/\.\.\/dist\/|helpers\/cli\.js|\.mjs['"]/, 'runs the built package (dist, the CLI, a fixture process)'],
  [/\bdescribePg\b|from 'pg'|\/pg\.js'/, 'needs PostgreSQL'],
]

/** Left out by name: the built package's own tests, and in-process load runs (thousands of calls or connections). */
const LEFT_OUT = [
  'test/e2e/', // the built package as a person installs and runs it
  'test/browser/bundle.test.ts', // the sizes of the built bundles
  'test/bench-smoke.test.ts',
  'test/reliability/fuzz-tools.test.ts',
  'test/reliability/http-abuse.test.ts',
  'test/reliability/leaks.test.ts',
  'test/reliability/state-machine.test.ts',
]

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'fixtures' || e.name.startsWith('.') ? [] : testFiles(p)
    return e.name.endsWith('.test.ts') ? [p] : []
  })
}

/** The file's text and that of the test modules it imports (relative imports inside test/), transitively. */
function sourceWithImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return ''
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  const imported = [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)]
    .map((m) => path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts')))
    .filter((p) => p.startsWith(path.join(root, 'test') + path.sep) && p.endsWith('.ts'))
  return [text, ...imported.map((p) => sourceWithImports(p, seen))].join('\n')
}

const slow = testFiles(path.join(root, 'test'))
  .map((f) => path.relative(root, f).split(path.sep).join('/'))
  .filter((f) => LEFT_OUT.some((p) => f.startsWith(p)) || SLOW_MARKERS.some(([marker]) => marker.test(sourceWithImports(path.join(root, f)))))

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: slow,
      // Nothing here uses dist/: no build before the run.
      globalSetup: [],
    },
  }),
)
