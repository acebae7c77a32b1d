/**
 * The lists that must agree, checked against each other instead of kept by hand: every public
 * entry in package.json's exports has its source in src/, is an entry knip starts from, and (when it
 * offers `require`) is built for CommonJS by scripts/bundle.mjs; every framework `init` sets up with
 * a build plugin or a script of its own has a fixture app made by its starter (detected as that
 * framework by the CLI's own detection) and a test that runs it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { FRAMEWORKS, detectFramework, readProject } from '../../../src/cli/frameworks/index.js'

const root = path.resolve(import.meta.dirname, '../../..')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
const knip = JSON.parse(readFileSync(path.join(root, 'knip.json'), 'utf8')) as { entry: string[] }
const bundle = readFileSync(path.join(root, 'scripts/bundle.mjs'), 'utf8')

/** Every file a conditional export names, by condition. */
function targets(entry: unknown, condition = 'default'): [string, string][] {
  if (typeof entry === 'string') return [[condition, entry]]
  if (typeof entry !== 'object' || entry === null) return []
  return Object.entries(entry).flatMap(([c, v]) => targets(v, c === 'default' || c === 'types' ? (c === 'types' ? 'types' : condition) : c))
}

/** Whether a knip entry glob (with `{a,b}` alternatives) names `file`. */
function knipNames(glob: string, file: string): boolean {
  const alternatives = /\{([^}]+)\}/.exec(glob)
  if (!alternatives) return glob === file
  return alternatives[1]!.split(',').some((a) => knipNames(glob.replace(alternatives[0], a), file))
}

describe('the package entries', () => {
  const entries = Object.entries(pkg.exports).filter(([name]) => name !== './package.json')

  it('each export has its source in src/, is a knip entry, and its require build is in the bundle script', () => {
    const problems: string[] = []
    for (const [name, entry] of entries) {
      for (const [condition, file] of targets(entry)) {
        if (condition === 'types') continue
        const source = file.replace(/^\.\/dist\//, 'src/').replace(/\.(c|m)?js$/, '.ts')
        if (!existsSync(path.join(root, source))) problems.push(`${name} (${condition}): no ${source}`)
        if (!knip.entry.some((g) => knipNames(g, source))) problems.push(`${name}: ${source} is not a knip entry`)
        if (file.endsWith('.cjs') && !bundle.includes(`'${file.replace(/^\.\/dist\//, '').replace(/\.cjs$/, '')}'`)) problems.push(`${name}: ${file} is not built by scripts/bundle.mjs`)
      }
    }
    expect(problems).toEqual([])
    expect(entries.length).toBeGreaterThanOrEqual(7)
  })

  it('the check can fail: a knip glob names only its own alternatives', () => {
    expect(knipNames('src/integrations/{nuxt,astro}.ts', 'src/integrations/astro.ts')).toBe(true)
    expect(knipNames('src/integrations/{nuxt,astro}.ts', 'src/integrations/next.ts')).toBe(false)
  })
})

describe('the frameworks init sets up', () => {
  const fixtures = path.join(root, 'test/fixtures/frameworks')
  const apps = readdirSync(fixtures, { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(path.join(fixtures, e.name, 'package.json')))
  const testsText = [path.join(root, 'test/e2e/frameworks'), path.join(root, 'test/e2e')]
    .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(path.join(d, f), 'utf8')))
    .join('\n')

  it('each has a fixture app detected as it, and a test that names that app', () => {
    // The head-snippet set-ups (a server-rendered app, anything else) have no plugin of their own to exercise.
    const own = FRAMEWORKS.filter((f) => !['other', 'rails', 'django', 'laravel'].includes(f.id))
    const detected = new Map(apps.map((a) => [a.name, detectFramework(readProject(path.join(fixtures, a.name))).id]))
    const missing = own.filter((f) => ![...detected].some(([app, id]) => id === f.id && testsText.includes(`'${app}'`))).map((f) => f.id)
    expect(missing).toEqual([])
  })
})
