/**
 * get_annotation shows the agent a few lines around an annotation's source location. A page (or a
 * crafted store) names the file, so the server reads only what belongs in a prompt: never a
 * dot-file or a file under a dot-folder (`.env`, `.git/config`, `.npmrc`), never a file git
 * ignores, never outside the root; the agent is told why the lines are missing.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createToolRegistry } from '../../../src/index.js'
import { memoryStore, testDir } from '../../helpers/store.js'
import { useCleanups } from '../../helpers/cleanup.js'

const cleanups = useCleanups()

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } })

/** A git project holding an app file, secrets in dot-files, and a git-ignored file. */
function project(): string {
  const { dir } = testDir(cleanups, 'marginalia-snippet-')
  git(dir, 'init', '-q')
  writeFileSync(path.join(dir, 'App.tsx'), 'export const App = () => <h1>Shop</h1>\n')
  writeFileSync(path.join(dir, '.env'), 'API_KEY=sk-secret-from-env\n')
  writeFileSync(path.join(dir, '.npmrc'), '//registry.npmjs.org/:_authToken=npm-secret\n')
  writeFileSync(path.join(dir, '.gitignore'), 'local-secrets.ts\n')
  writeFileSync(path.join(dir, 'local-secrets.ts'), 'export const token = "ignored-secret"\n')
  mkdirSync(path.join(dir, 'src'))
  symlinkSync(path.join(dir, '.env'), path.join(dir, 'src', 'config.ts'))
  return dir
}

async function snippetOf(root: string, file: string) {
  const store = memoryStore()
  cleanups.push(() => store.close())
  const session = await store.createSession({ url: 'http://localhost:5173/' })
  const a = await store.addAnnotation({ sessionId: session.id, comment: 'Look here', source: { file, line: 1 } })
  const got = await createToolRegistry(store, { sources: { root } }).call('get_annotation', { id: a.id, images: false })
  if (!got.ok) throw new Error(`get_annotation failed: ${JSON.stringify(got)}`)
  return got.result as { sourceLines?: string; sourceLinesWithheld?: string }
}

describe('source lines are read only from the project’s own source', () => {
  it('an ordinary file gives its lines', async () => {
    const root = project()
    expect((await snippetOf(root, 'App.tsx')).sourceLines).toContain('<h1>Shop</h1>')
  })

  it.each(['.env', '.git/config', '.npmrc', 'src/config.ts'])('%s is not read, and the agent is told why', async (file) => {
    const root = project()
    const got = await snippetOf(root, file)
    expect(got.sourceLines).toBeUndefined()
    expect(got.sourceLinesWithheld).toMatch(/dot-files or dot-folders/)
    expect(JSON.stringify(got)).not.toMatch(/sk-secret-from-env|npm-secret|repositoryformatversion/)
  })

  it('a file git ignores is not read, and the agent is told why', async () => {
    const root = project()
    const got = await snippetOf(root, 'local-secrets.ts')
    expect(got.sourceLines).toBeUndefined()
    expect(got.sourceLinesWithheld).toMatch(/git ignores/)
    expect(JSON.stringify(got)).not.toContain('ignored-secret')
  })

  it('a file outside the root is not read', async () => {
    const root = project()
    const outside = testDir(cleanups, 'marginalia-outside-').dir
    writeFileSync(path.join(outside, 'id_rsa'), 'PRIVATE KEY\n')
    const got = await snippetOf(root, path.relative(root, path.join(outside, 'id_rsa')))
    expect(got.sourceLines).toBeUndefined()
    expect(JSON.stringify(got)).not.toContain('PRIVATE KEY')
  })
})
