/**
 * Where a test lives says what it costs, and vitest's projects run each folder (vitest.config.ts):
 * `test/unit/` in-process only, `test/browser/` Chromium, `test/e2e/` the built package, processes
 * and PostgreSQL. A test file elsewhere would run in no project; a unit test (or a test module it
 * imports) that launches Chromium, starts a process, reads dist/ or connects to PostgreSQL would
 * slow the inner loop `npm run test:fast` and make it depend on a build.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../../..')
const testDir = path.join(root, 'test')

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'fixtures' || e.name === 'node_modules' || e.name.startsWith('.') ? [] : files(p, keep)
    return keep(e.name) ? [p] : []
  })
}

/** What makes a test something other than a unit test, and how it shows in the code. */
export const COSTLY: readonly (readonly [RegExp, string])[] = [
  [/\buseChromium\b|\blaunchChromium\b|helpers\/chromium\.js'/, 'drives Chromium'],
  [/['"`]\.{1,2}\/(?:\.\.\/)*dist\/|[(, ]'dist'|\bDIST\b|helpers\/cli\.js'/, 'runs the built package (dist/)'],
  [/from 'node:child_process'|helpers\/process\.js'/, 'starts a process'],
  [/\bdescribePg\b|from 'pg'|helpers\/pg\.js'/, 'needs PostgreSQL'],
]

/** The file's text and that of the test modules it imports (relative imports inside test/), transitively. */
function withImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return ''
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  const imported = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm)]
    .map((m) => path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts')))
    .filter((p) => p.startsWith(testDir + path.sep) && p.endsWith('.ts'))
  return [text, ...imported.map((p) => withImports(p, seen))].join('\n')
}

export function costsOf(file: string): string[] {
  const text = withImports(file)
  return COSTLY.filter(([marker]) => marker.test(text)).map(([, why]) => why)
}

describe('the test layout', () => {
  const tests = files(testDir, (n) => n.endsWith('.test.ts')).map((f) => path.relative(root, f).split(path.sep).join('/'))

  it('puts every test file in one of the three projects', () => {
    expect(tests.length).toBeGreaterThan(100)
    expect(tests.filter((f) => !/^test\/(unit|browser|e2e)\//.test(f))).toEqual([])
  })

  it('keeps unit tests in-process: no Chromium, process, dist/ or PostgreSQL', () => {
    const self = path.relative(root, import.meta.filename).split(path.sep).join('/')
    const costly = tests.filter((f) => f.startsWith('test/unit/') && f !== self).map((f) => [f, costsOf(path.join(root, f))] as const).filter(([, why]) => why.length > 0)
    expect(costly.map(([f, why]) => `${f}: ${why.join(', ')}`)).toEqual([])
  })

  it('tells a costly test from a unit test (the check can fail)', () => {
    expect(costsOf(path.join(root, 'test/e2e/stdio.test.ts'))).not.toEqual([])
    expect(costsOf(path.join(root, 'test/browser/overlay.test.ts'))).toContain('drives Chromium')
  })
})
